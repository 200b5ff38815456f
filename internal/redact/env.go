package redact

import (
	"net/url"
	"slices"
	"strings"
)

// secretWords are the parts of a variable's name (split at "_") that say
// its value is a secret; a part that contains one of secretInside does
// too (GITHUBTOKEN, DBPASSWORD).
var (
	secretWords  = []string{"KEY", "KEYS", "APIKEY", "PASS", "PASSWD", "PWD", "PASSPHRASE", "AUTH", "COOKIE", "DSN", "PAT", "PRIVATE", "SIGNATURE"}
	secretInside = []string{"TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "APIKEY", "ACCESSKEY"}
	// notSecretLast are last parts that name where a secret is (a
	// file, a socket), not the secret: SSH_AUTH_SOCK, GOOGLE_APPLICATION_CREDENTIALS_FILE.
	notSecretLast = []string{"SOCK", "SOCKET", "FILE", "PATH", "DIR", "HOME"}
	// notSecret are whole names that match the words but hold none.
	notSecret = []string{"PWD", "OLDPWD"}
)

// LooksSecret reports whether a variable named name holds a secret by its
// name: a part TOKEN, SECRET, KEY, PASSWORD, PASS, CREDENTIAL, AUTH and
// the like, unless the name says where one is kept (…_FILE, …_SOCK).
func LooksSecret(name string) bool {
	up := strings.ToUpper(name)
	if slices.Contains(notSecret, up) {
		return false
	}
	parts := strings.Split(up, "_")
	if slices.Contains(notSecretLast, parts[len(parts)-1]) {
		return false
	}
	for _, p := range parts {
		if slices.Contains(secretWords, p) {
			return true
		}
		for _, w := range secretInside {
			if strings.Contains(p, w) {
				return true
			}
		}
	}
	return false
}

// FromEnv returns the secrets of env (NAME=value entries): the values of
// the variables named in always, and of those [LooksSecret] names, and
// the password of any value that is a URL with one
// (postgres://u:PASSWORD@host). Values shorter than [MinLen] are left
// out.
func FromEnv(env, always []string) []Secret {
	var out []Secret
	for _, kv := range env {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < MinLen {
			continue
		}
		if slices.Contains(always, name) || LooksSecret(name) {
			out = append(out, Secret{Name: name, Value: v})
			continue
		}
		if pw := urlPassword(v); len(pw) >= MinLen {
			out = append(out, Secret{Name: name, Value: pw})
		}
	}
	return out
}

// urlPassword is the password of v when v is a URL that carries one.
func urlPassword(v string) string {
	if !strings.Contains(v, "://") || !strings.Contains(v, "@") {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}
