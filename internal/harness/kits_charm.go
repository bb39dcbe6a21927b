package harness

// The charm-service kit's SSH smoke gate cannot know how a repository
// starts its server: the command is an argument written into the
// manifest, empty until someone sets it, and an empty command makes the
// gate exit 77 (not evidence) rather than start a guess. The gate's
// comment lists the main packages the profile found, as candidates only.

import (
	_ "embed"
	"slices"
	"strings"
)

// sshSmokeScript is the gate after its header, kept as a shell file so it
// reads (and lints) as the script it is; @CANDIDATES@ is replaced by the
// main packages the profile found.
//
//go:embed kits_charm_ssh_smoke.sh
var sshSmokeScript string

// charmServerCandidates are the Go main packages of the profile, as the
// "go run" commands a reader may adapt; none is chosen for them.
func charmServerCandidates(p *RepoProfile) []string {
	var list []string
	for _, e := range p.Entrypoints {
		if e.Kind == "go-main" {
			dir := e.Path
			if dir != "." {
				dir = "./" + dir
			}
			list = append(list, "go run "+dir)
		}
	}
	slices.Sort(list)
	return slices.Compact(list)
}

func charmSSHGate(p *RepoProfile) string {
	candidates := "none found"
	if c := charmServerCandidates(p); len(c) > 0 {
		candidates = strings.Join(c, "; ")
	}
	return gateHeader + strings.Replace(sshSmokeScript, "@CANDIDATES@", candidates, 1)
}
