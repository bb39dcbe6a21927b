package harness

import (
	"context"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/harness/web"
)

// TestWebAppKit: the profile finds a front end (a dev server in a package
// script, or a static index.html) and the web-app kit writes a gate and a
// scenario that reach it: the dev server on its own port, or the page's
// directory served as it is. Other repositories do not get the kit.
func TestWebAppKit(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		tracked   map[string]string
		applies   bool
		gate, url []string // substrings of the gate and the scenario
	}{
		{
			name: "vite",
			tracked: map[string]string{
				"web/package.json": `{"name":"shop","scripts":{"dev":"vite","build":"vite build"},"devDependencies":{"vite":"^5.0.0"}}` + "\n",
				"web/index.html":   "<!doctype html><title>Shop</title><div id=app></div>\n",
				"web/src/main.ts":  "document.title = 'Shop'\n",
			},
			applies: true,
			gate:    []string{`(cd 'web' && PORT=5173 exec npm run dev -- --host 127.0.0.1 --port 5173 --strictPort) >"${CRYSTALLIZE_EVIDENCE_DIR:-.}/dev-server.log" 2>&1 &`, "crystallize harness web \"$s\""},
			url:     []string{`"url": "http://127.0.0.1:5173/"`},
		},
		{
			name: "next",
			tracked: map[string]string{
				"package.json":   `{"name":"site","scripts":{"dev":"next dev","build":"next build"},"dependencies":{"next":"14.0.0","react":"18.0.0"}}` + "\n",
				"pages/index.js": "export default function Home() { return null }\n",
			},
			applies: true,
			gate:    []string{"PORT=3000 exec npm run dev -- -H 127.0.0.1 -p 3000"},
			url:     []string{`"url": "http://127.0.0.1:3000/"`},
		},
		{
			name: "static",
			tracked: map[string]string{
				"docs/site/index.html":       "<!doctype html><title>Docs</title><h1>Docs</h1>\n",
				"docs/site/guide/index.html": "<!doctype html><title>Guide</title><h1>Guide</h1>\n",
				"tools/testdata/index.html":  "<!doctype html><title>fixture</title>\n",
				"README.md":                  "# docs\n",
			},
			applies: true,
			url:     []string{`"serve": "docs/site"`, `"url": "/index.html"`},
		},
		{
			name: "go-server",
			tracked: map[string]string{
				"go.mod":                       "module example.com/api\n\ngo 1.22\n",
				"main.go":                      "package main\n\nimport \"net/http\"\n\nfunc main() { http.ListenAndServe(\":8080\", nil) }\n",
				"internal/testdata/index.html": "<!doctype html><title>fixture</title>\n",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := makeRepo(t, repo{name: tc.name, tracked: tc.tracked})
			p, err := Profile(ctx, dir, ProfileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			kit, _ := KitByID("web-app")
			if got := kit.Applies(p); got != tc.applies {
				t.Fatalf("web-app applies = %t, want %t; hints %+v", got, tc.applies, p.RiskHints)
			}
			if !tc.applies {
				return
			}
			files := map[string]string{}
			for _, o := range kit.outputs(p) {
				files[o.Path] = o.Content
			}
			for _, want := range tc.gate {
				if !strings.Contains(files["gates/web.sh"], want) {
					t.Errorf("gates/web.sh lacks %q:\n%s", want, files["gates/web.sh"])
				}
			}
			for _, want := range tc.url {
				if !strings.Contains(files["harness/web/smoke.json"], want) {
					t.Errorf("harness/web/smoke.json lacks %q:\n%s", want, files["harness/web/smoke.json"])
				}
			}
			// The scenario the kit writes is one the runner accepts.
			if _, err := web.ParseScenario([]byte(files["harness/web/smoke.json"]), "harness/web/smoke.json"); err != nil {
				t.Errorf("kit scenario: %v", err)
			}
		})
	}
}
