package harness

// The web-app kit's files name what the profile found: the directory of
// a static page, or the package whose dev server serves the front end
// and the port it is asked to listen on.

import (
	"fmt"
	"path"
	"strings"
)

// webApp is how the web-app kit reaches a repository's front end.
type webApp struct {
	// Serve is the directory of a static index.html; empty for a dev
	// server.
	Serve string
	// PackageDir, Script, Tool and Port start a dev server: npm run
	// Script in PackageDir, listening on Port.
	PackageDir, Script, Tool string
	Port                     int
}

// devServerPorts are the ports the kit asks each dev server for (their
// own defaults, so the scenario's URL reads as the developer knows it).
var devServerPorts = map[string]int{"vite": 5173, "astro": 4321, "ng": 4200, "parcel": 1234}

// webAppOf reads the front end from the profile: a dev server first (a
// page that needs building is not served as it is), else the shallowest
// static index.html.
func webAppOf(p *RepoProfile) webApp {
	var static []string
	for _, e := range p.Entrypoints {
		switch e.Kind {
		case "dev-server":
			script, tool, _ := strings.Cut(e.Detail, ": ")
			port := devServerPorts[tool]
			if port == 0 {
				port = 3000
			}
			return webApp{PackageDir: path.Dir(e.Path), Script: script, Tool: tool, Port: port}
		case "static-site":
			static = append(static, e.Detail)
		}
	}
	best := "."
	for i, d := range static {
		if i == 0 || strings.Count(d, "/") < strings.Count(best, "/") || (d == "." && best != ".") {
			best = d
		}
	}
	return webApp{Serve: best}
}

// devServerFlags ask each dev server for a loopback host and a fixed port.
func devServerFlags(tool string, port int) string {
	switch tool {
	case "vite", "astro":
		return fmt.Sprintf("-- --host 127.0.0.1 --port %d --strictPort", port)
	case "next":
		return fmt.Sprintf("-- -H 127.0.0.1 -p %d", port)
	case "ng":
		return fmt.Sprintf("-- --host 127.0.0.1 --port %d", port)
	case "parcel":
		return fmt.Sprintf("-- --port %d", port)
	}
	return ""
}

const webGateRun = `# Replays every scenario under harness/web in headless Chromium
# ("crystallize harness web"). Exit 1 when a check fails, 77 (not evidence)
# when none failed but one could not be made, such as no browser or no
# screenshot baseline yet.
status=0
found=0
for s in harness/web/*.json; do
  [ -f "$s" ] || continue
  found=1
  code=0
  crystallize harness web "$s" || code=$?
  if [ "$code" = 77 ]; then
    [ "$status" = 0 ] && status=77
  elif [ "$code" != 0 ]; then
    status=1
  fi
done
if [ "$found" = 0 ]; then
  echo "no scenario under harness/web: nothing was checked"
  exit 77
fi
exit $status
`

func webGate(p *RepoProfile) string {
	app := webAppOf(p)
	if app.Serve != "" {
		return gateHeader + webGateRun
	}
	cd := ""
	if app.PackageDir != "." {
		cd = "cd " + ShellQuote(app.PackageDir) + " && "
	}
	start := fmt.Sprintf(`# Starts the dev server (npm run %s, %s) on 127.0.0.1:%d for the
# scenarios; its log is evidence, and the harness stops it with the gate.
(%sPORT=%d exec npm run %s %s) >"${CRYSTALLIZE_EVIDENCE_DIR:-.}/dev-server.log" 2>&1 &
`, app.Script, app.Tool, app.Port, cd, app.Port, app.Script, devServerFlags(app.Tool, app.Port))
	return gateHeader + start + webGateRun
}

// ShellQuote quotes s as one word for sh: between single quotes, each
// single quote closed, escaped and reopened. Nothing inside is expanded,
// so a gate's output in a proposed command line runs as text.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func webScenario(p *RepoProfile) string {
	app := webAppOf(p)
	where := fmt.Sprintf(`  "url": "http://127.0.0.1:%d/",`, app.Port)
	if app.Serve != "" {
		where = fmt.Sprintf("  \"serve\": %q,\n  \"url\": \"/index.html\",", app.Serve)
	}
	return `{
  "name": "smoke",
` + where + `
  "viewport": {"width": 1280, "height": 800},
  "budgets": {"lcpMs": 2500, "loadMs": 3000},
  "steps": [
    {"expect": [{"role": "heading"}]},
    {"audit": {}},
    {"screenshot": "home"}
  ]
}
`
}
