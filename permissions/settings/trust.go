package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/agent-mcp/agent-mcp/permissions/confine"
)

// TrustFile is the name of the file, in agent-mcp's user configuration
// directory, that lists the directories the operator trusts.
const TrustFile = "trusted.json"

// trustList is the content of [TrustFile].
type trustList struct {
	// Trusted are absolute directories, symbolic links resolved.
	Trusted []string `json:"trusted"`
}

// Trusted reports whether the operator trusts dir: it is, or is inside, a
// directory recorded by [Trust] in configDir. A missing trust file trusts
// nothing; one that does not parse is an error naming it.
func Trusted(configDir, dir string) (bool, error) {
	if configDir == "" || dir == "" {
		return false, nil
	}
	list, err := readTrust(configDir)
	if err != nil {
		return false, err
	}
	real, err := confine.ResolvePath(filepath.Clean(dir))
	if err != nil {
		return false, err
	}
	for _, t := range list.Trusted {
		if confine.Inside(t, real) {
			return true, nil
		}
	}
	return false, nil
}

// Trust records dir (made absolute, symbolic links resolved) as trusted
// in configDir's [TrustFile], and returns that file's path. The file is
// replaced atomically, so a concurrent reader sees the old list or the new
// one.
func Trust(configDir, dir string) (string, error) {
	if configDir == "" {
		return "", errors.New("agent-mcp's configuration directory is unknown: set AGENT_MCP_CONFIG_DIR or XDG_CONFIG_HOME")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("trusting %s: %w", dir, err)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", fmt.Errorf("trusting %s: not a directory", dir)
	}
	list, err := readTrust(configDir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(configDir, TrustFile)
	if slices.Contains(list.Trusted, real) {
		return path, nil
	}
	list.Trusted = append(list.Trusted, real)
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(configDir, 0o700); err != nil {
		return "", fmt.Errorf("recording trust: %w", err)
	}
	tmp, err := os.CreateTemp(configDir, TrustFile+".*")
	if err != nil {
		return "", fmt.Errorf("recording trust: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return "", fmt.Errorf("recording trust: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("recording trust: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("recording trust: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("recording trust: %w", err)
	}
	return path, nil
}

func readTrust(configDir string) (trustList, error) {
	var list trustList
	path := filepath.Join(configDir, TrustFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return list, nil
	}
	if err != nil {
		return list, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return list, fmt.Errorf("%s: not a trust list (expected {\"trusted\": [directories]}): %w", path, err)
	}
	return list, nil
}
