package sandbox

import (
	"regexp"
	"strings"
	"testing"
)

// TestMaskText: extract's group 1 spans become sentinels (one per
// distinct value), the rest stays; maskDuplicates reaches the value
// elsewhere; without extract the content but its final line break is one
// secret; onExtractNoMatch warns, denies or fails.
func TestMaskText(t *testing.T) {
	t.Parallel()
	const tok = "gho_0123456789abcdefghijABCDEFGHIJ0123"
	text := "github.com:\n    oauth_token: " + tok + "\n    user: me\n# pasted " + tok + "\n"
	re := regexp.MustCompile(`oauth_token: (\S+)`)
	masked, secrets, note, err := maskText(text, "hosts.yml", re, false, NoMatchWarn, nil)
	if err != nil || note != "" || len(secrets) != 1 || secrets[0].Real != tok {
		t.Fatalf("maskText: %v %q %+v", err, note, secrets)
	}
	want := strings.Replace(text, tok, secrets[0].Sentinel, 1)
	if masked != want {
		t.Errorf("masked = %q, want %q", masked, want)
	}
	masked, secrets, _, _ = maskText(text, "hosts.yml", re, true, NoMatchWarn, nil)
	if strings.Contains(masked, tok) || strings.Count(masked, secrets[0].Sentinel) != 2 {
		t.Errorf("maskDuplicates: %q", masked)
	}
	masked, secrets, _, _ = maskText("s3cr3t-value-here\n", "f", nil, false, NoMatchWarn, nil)
	if len(secrets) != 1 || secrets[0].Real != "s3cr3t-value-here" || masked != secrets[0].Sentinel+"\n" {
		t.Errorf("whole file: %q %+v", masked, secrets)
	}
	none := regexp.MustCompile(`password (\S+)`)
	for mode, want := range map[NoMatch]string{NoMatchWarn: "warn", NoMatchDeny: "deny", NoMatchError: "error"} {
		masked, secrets, note, err := maskText(text, "f", none, false, mode, nil)
		switch want {
		case "error":
			if err == nil {
				t.Errorf("onExtractNoMatch error: no error")
			}
		case "warn":
			if note != "warn" || masked != text || secrets != nil {
				t.Errorf("onExtractNoMatch warn: %q %q", note, masked)
			}
		case "deny":
			if note != "deny" {
				t.Errorf("onExtractNoMatch deny: %q", note)
			}
		}
	}
}
