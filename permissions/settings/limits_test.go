package settings

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSandboxLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in             string
		procs, mem     int64
		wantErrMention string
	}{
		{`{"processes": 64, "memory": "128MiB"}`, 64, 128 << 20, ""},
		{`{"memory": 1048576}`, 0, 1 << 20, ""},
		{`{"memory": "8G"}`, 0, 8 << 30, ""},
		{`{"memory": "1.5 GiB"}`, 0, 3 << 29, ""},
		{`{"memory": "max", "processes": 0}`, -1, -1, ""},
		{`{"memory": "lots"}`, 0, 0, "sandbox.limits.memory"},
		{`{"memory": -1}`, 0, 0, "sandbox.limits.memory"},
		{`{"processes": -5}`, 0, 0, "sandbox.limits.processes"},
	} {
		var f SandboxFile
		if err := json.Unmarshal([]byte(`{"limits":`+tc.in+`}`), &f); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		var s SandboxSettings
		err := s.merge(&f, "/", "/home", false, "test")
		if tc.wantErrMention != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErrMention) {
				t.Errorf("%s: error %v, want one naming %s", tc.in, err, tc.wantErrMention)
			}
			continue
		}
		if err != nil || s.LimitProcesses != tc.procs || s.LimitMemory != tc.mem {
			t.Errorf("%s: processes %d, memory %d, err %v; want %d, %d", tc.in, s.LimitProcesses, s.LimitMemory, err, tc.procs, tc.mem)
		}
	}
}
