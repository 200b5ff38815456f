package permissions

import "fmt"

// PolicyInput is what the session's permission policy depends on.
type PolicyInput struct {
	// ModeFlag is the --permission-mode value as given; empty when the
	// flag was not given.
	ModeFlag string
	// SettingsMode is the settings' defaultMode (after workspace trust);
	// empty when no source set one.
	SettingsMode Mode
	// HostConfirms is true when the client is an MCP host that asks its
	// user before each call (serve); false when nobody else confirms calls
	// (chat).
	HostConfirms bool
}

// Policy is the permission policy a session starts with.
type Policy struct {
	// Mode is the starting mode.
	Mode Mode
	// TrustHost lets calls inside the working directories run without a
	// second question (writes included), because the host already asked.
	// Deny and ask rules, protected paths, paths outside the working
	// directories and what cannot be analysed still hold.
	TrustHost bool
	// Why says in one sentence where the mode came from.
	Why string
}

// DecidePolicy is the one place the starting policy is decided:
//
//	host confirms | --permission-mode | settings defaultMode | mode           | trust host
//	yes           | -                 | -                    | default        | yes
//	yes           | M                 | any                  | M              | no
//	yes           | -                 | M                    | M              | no
//	no            | M                 | any                  | M              | no
//	no            | -                 | M                    | M              | no
//	no            | -                 | -                    | default        | no
//
// Rules never change the policy: adding an unrelated deny rule does not
// make a host's calls ask twice, and an explicit mode (dontAsk, plan, or
// default itself) is honoured exactly. Ask rules are honoured in every row.
func DecidePolicy(in PolicyInput) (Policy, error) {
	if in.ModeFlag != "" {
		m, err := ParseMode(in.ModeFlag)
		if err != nil {
			return Policy{}, fmt.Errorf("--permission-mode: %w", err)
		}
		return Policy{Mode: m, Why: "--permission-mode " + string(m)}, nil
	}
	if in.SettingsMode != "" {
		return Policy{Mode: in.SettingsMode, Why: "the settings' defaultMode " + string(in.SettingsMode)}, nil
	}
	if in.HostConfirms {
		return Policy{Mode: ModeDefault, TrustHost: true,
			Why: "no mode given: the MCP host confirms each call, so calls inside the working directories are not asked about again"}, nil
	}
	return Policy{Mode: ModeDefault, Why: "no mode given"}, nil
}
