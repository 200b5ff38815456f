package permissions

import "testing"

// TestDecidePolicy is the decision table of the README's permission
// section.
func TestDecidePolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        PolicyInput
		mode      Mode
		trustHost bool
	}{
		{"serve, nothing given", PolicyInput{HostConfirms: true}, ModeDefault, true},
		{"serve, --permission-mode dontAsk", PolicyInput{HostConfirms: true, ModeFlag: "dontAsk"}, ModeDontAsk, false},
		{"serve, --permission-mode default", PolicyInput{HostConfirms: true, ModeFlag: "default"}, ModeDefault, false},
		{"serve, --permission-mode plan", PolicyInput{HostConfirms: true, ModeFlag: "plan"}, ModePlan, false},
		{"serve, settings default", PolicyInput{HostConfirms: true, SettingsMode: ModeDefault}, ModeDefault, false},
		{"serve, settings acceptEdits", PolicyInput{HostConfirms: true, SettingsMode: ModeAcceptEdits}, ModeAcceptEdits, false},
		{"serve, flag over settings", PolicyInput{HostConfirms: true, ModeFlag: "plan", SettingsMode: ModeBypassPermissions}, ModePlan, false},
		{"chat, nothing given", PolicyInput{}, ModeDefault, false},
		{"chat, settings dontAsk", PolicyInput{SettingsMode: ModeDontAsk}, ModeDontAsk, false},
		{"chat, flag bypassPermissions", PolicyInput{ModeFlag: "bypassPermissions"}, ModeBypassPermissions, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := DecidePolicy(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if p.Mode != tt.mode || p.TrustHost != tt.trustHost {
				t.Errorf("DecidePolicy(%+v) = mode %s, trust host %v; want %s, %v", tt.in, p.Mode, p.TrustHost, tt.mode, tt.trustHost)
			}
			if p.Why == "" {
				t.Error("no reason given")
			}
		})
	}
	if _, err := DecidePolicy(PolicyInput{ModeFlag: "yolo"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
}
