package harness

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// shapeRepo builds a committed repository from files, with the paths in
// executable marked executable (as CI scripts are).
func shapeRepo(t *testing.T, files map[string]string, executable ...string) string {
	t.Helper()
	gitEnv(t)
	dir := t.TempDir()
	writeTree(t, dir, files)
	for _, p := range executable {
		if err := os.Chmod(filepath.Join(dir, filepath.FromSlash(p)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run(t, dir, "git", "init", "-q", "-b", "main")
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-q", "-m", "initial")
	return dir
}

func hasSignal(list []Signal, want Signal) bool { return slices.Contains(list, want) }

func hasHint(p *RepoProfile, family, signal, path string) bool {
	for _, h := range p.RiskHints {
		if h.Family == family && h.Signal == signal && slices.Contains(h.Paths, path) {
			return true
		}
	}
	return false
}

// The repository shapes below are the ones real projects take and that a
// profile built only from workflow YAML and npm manifests missed.
func TestProfileRecognisesRepositoryShapes(t *testing.T) {
	cases := []struct {
		name       string
		files      map[string]string
		executable []string
		check      func(*RepoProfile) bool
	}{
		{
			// CI that is a shell script the hosted workflow only calls.
			name: "ci-script-dot-ci",
			files: map[string]string{
				"pyproject.toml": "[project]\nname = \"orgtool\"\n",
				".ci/run":        "#!/bin/sh\nset -eu\npython -m pytest\n",
			},
			executable: []string{".ci/run"},
			check: func(p *RepoProfile) bool {
				return hasSignal(p.CI, Signal{Kind: "ci-script", Path: ".ci/run"}) && hasHint(p, FamilyInfrastructure, "ci", ".ci/run")
			},
		},
		{
			name: "ci-script-ci-dir",
			files: map[string]string{
				"go.mod":      "module example.com/tool\n\ngo 1.22\n",
				"ci/test.sh":  "#!/bin/sh\ngo test ./...\n",
				"ci/README":   "how the scripts run\n",
				"scripts/ci":  "#!/bin/sh\nexec ci/test.sh\n",
				"scripts/fmt": "#!/bin/sh\ngofmt -l .\n",
			},
			executable: []string{"scripts/ci", "scripts/fmt"},
			check: func(p *RepoProfile) bool {
				return hasSignal(p.CI, Signal{Kind: "ci-script", Path: "ci/test.sh"}) &&
					hasSignal(p.CI, Signal{Kind: "ci-script", Path: "scripts/ci"}) &&
					!hasSignal(p.CI, Signal{Kind: "ci-script", Path: "ci/README"}) &&
					!hasSignal(p.CI, Signal{Kind: "ci-script", Path: "scripts/fmt"})
			},
		},
		{
			name: "python-project-scripts",
			files: map[string]string{
				"pyproject.toml": "[project]\nname = \"brew\"\ndependencies = [\"click>=8\"]\n\n[project.scripts]\nbrew = \"brew.cli:main\"\nbrew-admin = 'brew.admin:run'\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n",
			},
			check: func(p *RepoProfile) bool {
				return hasSignal(p.Entrypoints, Signal{Kind: "python-script", Path: "pyproject.toml", Detail: "brew -> brew.cli:main"}) &&
					hasSignal(p.Entrypoints, Signal{Kind: "python-script", Path: "pyproject.toml", Detail: "brew-admin -> brew.admin:run"}) &&
					len(p.Entrypoints) == 2
			},
		},
		{
			name: "python-setup-cfg-console-scripts",
			files: map[string]string{
				"setup.cfg": "[metadata]\nname = kettle\n\n[options.entry_points]\nconsole_scripts =\n    kettle = kettle.main:cli\n    kettle-serve = kettle.server:serve\ngui_scripts =\n    kettle-gui = kettle.gui:run\n\n[flake8]\nmax-line-length = 100\n",
			},
			check: func(p *RepoProfile) bool {
				return hasSignal(p.Stacks, Signal{Kind: "python", Path: "setup.cfg"}) &&
					hasSignal(p.Entrypoints, Signal{Kind: "python-script", Path: "setup.cfg", Detail: "kettle -> kettle.main:cli"}) &&
					hasSignal(p.Entrypoints, Signal{Kind: "python-script", Path: "setup.cfg", Detail: "kettle-serve -> kettle.server:serve"}) &&
					len(p.Entrypoints) == 2
			},
		},
		{
			name: "python-setup-py-console-scripts",
			files: map[string]string{
				"setup.py": "from setuptools import setup\n\nsetup(\n    name=\"teapot\",\n    entry_points={\n        \"console_scripts\": [\n            \"teapot=teapot.__main__:main\",\n            'teapot-lint = teapot.lint:main',\n        ],\n    },\n)\n",
			},
			check: func(p *RepoProfile) bool {
				return hasSignal(p.Entrypoints, Signal{Kind: "python-script", Path: "setup.py", Detail: "teapot -> teapot.__main__:main"}) &&
					hasSignal(p.Entrypoints, Signal{Kind: "python-script", Path: "setup.py", Detail: "teapot-lint -> teapot.lint:main"})
			},
		},
		{
			// Alembic keeps its migrations beside env.py in a directory
			// of any name, configured by alembic.ini.
			name: "alembic-migrations",
			files: map[string]string{
				"backend/pyproject.toml":                    "[project]\nname = \"api\"\ndependencies = [\"alembic>=1.12\", \"sqlmodel>=0.0.20\"]\n",
				"backend/alembic.ini":                       "[alembic]\nscript_location = app/schema\n",
				"backend/app/schema/env.py":                 "from alembic import context\n\ncontext.configure()\n",
				"backend/app/schema/script.py.mako":         "\"\"\"${message}\"\"\"\n",
				"backend/app/schema/versions/0001_users.py": "from alembic import op\n\ndef upgrade():\n    op.drop_column(\"user\", \"nickname\")\n",
			},
			check: func(p *RepoProfile) bool {
				return hasSignal(p.DataStores, Signal{Kind: "migrations", Path: "backend/app/schema"}) &&
					hasHint(p, FamilyDatabase, "migrations", "backend/alembic.ini") &&
					hasHint(p, FamilyDatabase, "migrations", "backend/app/schema/env.py") &&
					hasHint(p, FamilyDatabase, "migrations", "backend/app/schema/versions/0001_users.py")
			},
		},
		{
			name: "pyjwt-dependency",
			files: map[string]string{
				"pyproject.toml":         "[project]\nname = \"api\"\ndependencies = [\n    \"pyjwt[crypto]<3.0.0,>=2.8.0\",\n]\n",
				"tools/requirements.txt": "PyJWT\nrequests==2.31.0\n",
			},
			check: func(p *RepoProfile) bool {
				return hasHint(p, FamilySecurity, "auth", "pyproject.toml") && hasHint(p, FamilySecurity, "auth", "tools/requirements.txt")
			},
		},
		{
			name: "go-ssh-server-wish",
			files: map[string]string{
				"go.mod":  "module example.com/shell\n\ngo 1.22\n\nrequire (\n\tgithub.com/charmbracelet/wish v1.4.0\n\tgithub.com/gliderlabs/ssh v0.3.7\n)\n",
				"main.go": "package main\n\nfunc main() {}\n",
			},
			check: func(p *RepoProfile) bool {
				return hasSignal(p.NetworkSurfaces, Signal{Kind: "ssh-server", Path: "go.mod", Detail: "github.com/charmbracelet/wish"}) &&
					hasSignal(p.NetworkSurfaces, Signal{Kind: "ssh-server", Path: "go.mod", Detail: "github.com/gliderlabs/ssh"}) &&
					hasHint(p, FamilySecurity, "ssh-server", "go.mod")
			},
		},
		{
			name: "go-ssh-server-x-crypto",
			files: map[string]string{
				"go.mod":                "module example.com/gate\n\ngo 1.22\n\nrequire golang.org/x/crypto v0.30.0\n",
				"cmd/gate/main.go":      "package main\n\nimport \"golang.org/x/crypto/ssh\"\n\nfunc main() {\n\tcfg := &ssh.ServerConfig{}\n\t_, _, _, _ = ssh.NewServerConn(nil, cfg)\n}\n",
				"internal/srv/serve.go": "package srv\n\nimport (\n\t\"net\"\n\n\tgossh \"golang.org/x/crypto/ssh\"\n)\n\nfunc Serve(c net.Conn, cfg *gossh.ServerConfig) { _, _, _, _ = gossh.NewServerConn(c, cfg) }\n",
				"client/dial.go":        "package client\n\nimport \"golang.org/x/crypto/ssh\"\n\nfunc Dial() { _, _ = ssh.Dial(\"tcp\", \"host:22\", &ssh.ClientConfig{}) }\n",
			},
			check: func(p *RepoProfile) bool {
				return hasSignal(p.NetworkSurfaces, Signal{Kind: "ssh-server", Path: "cmd/gate/main.go"}) &&
					hasSignal(p.NetworkSurfaces, Signal{Kind: "ssh-server", Path: "internal/srv/serve.go"}) &&
					!hasSignal(p.NetworkSurfaces, Signal{Kind: "ssh-server", Path: "client/dial.go"}) &&
					hasHint(p, FamilySecurity, "ssh-server", "cmd/gate/main.go")
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := shapeRepo(t, c.files, c.executable...)
			p, err := Profile(context.Background(), dir, ProfileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(p) {
				t.Errorf("profile missed the shape:\nstacks %v\nentrypoints %v\nci %v\ndata %v\nnetwork %v\nhints %+v",
					p.Stacks, p.Entrypoints, p.CI, p.DataStores, p.NetworkSurfaces, p.RiskHints)
			}
		})
	}
}
