package runconfig

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// SecretsConfig is the [secrets] table of the configuration.
type SecretsConfig struct {
	// File is a file of KEY=VALUE lines, relative to the configuration's
	// directory, consulted for a secret the environment does not set.
	// Blank lines and lines starting with "#" are skipped, an "export "
	// prefix is allowed, and a value in matching single or double quotes
	// loses them (nothing else is unescaped). The file must not be
	// readable by group or others: a secret store anyone on the machine
	// can read is not one.
	File string `toml:"file"`
	// Env lists the environment variables a workflow may read as
	// secrets with ctx.secret. A workflow's own declaration (its header's
	// "secrets:" or its manifest) is not enough: a bare .star file could
	// otherwise name any variable of the runner's environment. A secret
	// ctx.secret reads that is not listed comes from File only. The
	// config's own templates ({secret:ID}) and a model's api_key are the
	// config's choices and still read the environment.
	Env []string `toml:"env"`
}

// ErrSecret: a secret that is not declared or not set.
var ErrSecret = errors.New("secret unavailable")

// ErrSecretsFile is returned for a secrets file that cannot be used: not
// readable, readable by others, or malformed.
var ErrSecretsFile = errors.New("unusable secrets file")

// secretSource returns the function secrets are resolved with: getenv
// (the environment, as the cli passes it) first, then the configuration's
// secrets file. The file is read once, before the first step, so that an
// unusable file stops the run before anything happened rather than at the
// first secret.
func SecretSource(cfg *Config, getenv func(string) string) (func(string) string, error) {
	if cfg.Secrets.File == "" {
		return getenv, nil
	}
	file := cfg.Abs(cfg.Secrets.File)
	values, err := ReadSecretsFile(file)
	if err != nil {
		return nil, err
	}
	return func(id string) string {
		if getenv != nil {
			if v := getenv(id); v != "" {
				return v
			}
		}
		return values[id]
	}, nil
}

// Secret resolves the secret id as a run would: from getenv, else from
// the configuration's secrets file. It is for commands that call a model
// provider outside a run (session codify --refine). A secret set nowhere
// is ErrSecret, with a hint at where to set it.
func (c *Config) Secret(id string, getenv func(string) string) (string, error) {
	lookup, err := SecretSource(c, getenv)
	if err != nil {
		return "", err
	}
	if lookup != nil {
		if v := lookup(id); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("%w: %s is not set; %s", ErrSecret, id, c.SecretHint(id))
}

// readSecretsFile reads and parses a secrets file, refusing one whose
// permissions let group or others read (or write) it.
func ReadSecretsFile(file string) (map[string]string, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSecretsFile, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrSecretsFile, file)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o, which lets group or others read it; run chmod 600 %s", ErrSecretsFile, file, perm, file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSecretsFile, err)
	}
	return parseSecrets(file, data)
}

// parseSecrets parses KEY=VALUE lines (see SecretsConfig), reporting every
// bad line as "file:line: message". Messages never quote a line: it may
// hold a secret.
func parseSecrets(file string, data []byte) (map[string]string, error) {
	values := map[string]string{}
	lines := map[string]int{}
	var errs []error
	n := 0
	for line := range strings.Lines(string(data)) {
		n++
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%w: %s:%d: want KEY=VALUE", ErrSecretsFile, file, n))
			continue
		case !IsSecretID(k):
			errs = append(errs, fmt.Errorf("%w: %s:%d: the key is not a logical secret id (letters, digits, _ . -, not starting with a digit)", ErrSecretsFile, file, n))
			continue
		case lines[k] != 0:
			errs = append(errs, fmt.Errorf("%w: %s:%d: %s is already set on line %d", ErrSecretsFile, file, n, k, lines[k]))
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		values[k] = v
		lines[k] = n
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return values, nil
}

// isSecretID reports whether s can name a secret: a letter or "_", then
// letters, digits, "_", "." or "-".
func IsSecretID(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '.' || r == '-')) {
			return false
		}
	}
	return true
}

// secretHint says where a secret that is not set can be set.
func (c *Config) SecretHint(id string) string {
	if c != nil && c.Secrets.File != "" {
		return fmt.Sprintf("set the environment variable %s or add it to %s", id, c.Secrets.File)
	}
	return "set the environment variable " + id
}
