package runconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModelConfigErrors(t *testing.T) {
	p := filepath.Join(t.TempDir(), ConfigFile)
	os.WriteFile(p, []byte(`[models.default]
provider = "openai"
base_url = "localhost:11434"
model = "x"
timeout = "later"
[models.b]
provider = "gemini"
[models.c]
provider = "anthropic"
input_usd_per_mtok = -1
`), 0o644)
	_, err := LoadConfig(p)
	for _, want := range []string{
		p + `: models.default.base_url: "localhost:11434" is not an http or https URL`,
		p + `: models.default.timeout: "later" is not a positive duration`,
		p + `: models.b.provider: unknown provider "gemini"; want openai, anthropic or replay`,
		p + `: models.c.model: empty model`,
		p + `: models.c: negative price`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadConfig error lacks %q:\n%v", want, err)
		}
	}
}
