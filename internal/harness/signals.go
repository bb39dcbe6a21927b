package harness

// This file finds the profile's signals. Detection is by file name first
// (manifests, CI files, docs, migrations) and by content only for the
// files whose content says what names cannot: a Go file's package
// clause and imports, a manifest's dependencies. Each rule is a line of
// a table, so a reviewer can see at once why a signal was raised.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Risk families.
const (
	FamilyWeb            = "web"
	FamilyTerminal       = "terminal"
	FamilyAgent          = "agent"
	FamilyRAG            = "rag"
	FamilyInfrastructure = "infrastructure"
	FamilyDatabase       = "database"
	FamilyWindows        = "windows_service"
	FamilySecurity       = "security"
	FamilyPerformance    = "performance"
)

// Families lists the risk families in the order they are reported.
var Families = []string{FamilyWeb, FamilyTerminal, FamilyAgent, FamilyRAG, FamilyInfrastructure, FamilyDatabase, FamilyWindows, FamilySecurity, FamilyPerformance}

// depRule maps a dependency name (exact, or a prefix ending in "/") to a
// signal.
type depRule struct {
	dep, kind, family string
}

// depRules apply to go.mod requirements, package.json dependencies,
// pyproject.toml and Cargo.toml dependency names alike.
var depRules = []depRule{
	// data stores
	{"github.com/lib/pq", "postgres", FamilyDatabase}, {"github.com/jackc/pgx/", "postgres", FamilyDatabase},
	{"github.com/go-sql-driver/mysql", "mysql", FamilyDatabase}, {"modernc.org/sqlite", "sqlite", FamilyDatabase},
	{"github.com/mattn/go-sqlite3", "sqlite", FamilyDatabase}, {"gorm.io/", "orm", FamilyDatabase}, {"entgo.io/", "orm", FamilyDatabase},
	{"github.com/redis/go-redis/", "redis", FamilyDatabase}, {"pg", "postgres", FamilyDatabase}, {"mysql2", "mysql", FamilyDatabase},
	{"sqlite3", "sqlite", FamilyDatabase}, {"better-sqlite3", "sqlite", FamilyDatabase}, {"prisma", "orm", FamilyDatabase},
	{"@prisma/client", "orm", FamilyDatabase}, {"typeorm", "orm", FamilyDatabase}, {"sequelize", "orm", FamilyDatabase},
	{"drizzle-orm", "orm", FamilyDatabase}, {"mongoose", "mongodb", FamilyDatabase}, {"mongodb", "mongodb", FamilyDatabase},
	{"redis", "redis", FamilyDatabase}, {"ioredis", "redis", FamilyDatabase}, {"sqlalchemy", "orm", FamilyDatabase},
	{"psycopg", "postgres", FamilyDatabase}, {"psycopg2", "postgres", FamilyDatabase}, {"diesel", "orm", FamilyDatabase}, {"sqlx", "orm", FamilyDatabase},
	// agents
	{"github.com/modelcontextprotocol/go-sdk", "mcp-sdk", FamilyAgent}, {"github.com/mark3labs/mcp-go", "mcp-sdk", FamilyAgent},
	{"@modelcontextprotocol/sdk", "mcp-sdk", FamilyAgent}, {"mcp", "mcp-sdk", FamilyAgent},
	{"github.com/openai/openai-go", "llm-sdk", FamilyAgent}, {"github.com/anthropics/anthropic-sdk-go", "llm-sdk", FamilyAgent},
	{"github.com/tmc/langchaingo", "llm-sdk", FamilyAgent}, {"openai", "llm-sdk", FamilyAgent}, {"@anthropic-ai/sdk", "llm-sdk", FamilyAgent},
	{"anthropic", "llm-sdk", FamilyAgent}, {"langchain", "llm-sdk", FamilyAgent}, {"@langchain/core", "llm-sdk", FamilyAgent}, {"ai", "llm-sdk", FamilyAgent},
	// retrieval
	{"github.com/pgvector/pgvector-go", "vector-store", FamilyRAG}, {"pgvector", "vector-store", FamilyRAG}, {"chromadb", "vector-store", FamilyRAG},
	{"@pinecone-database/pinecone", "vector-store", FamilyRAG}, {"pinecone-client", "vector-store", FamilyRAG},
	{"@qdrant/js-client-rest", "vector-store", FamilyRAG}, {"qdrant-client", "vector-store", FamilyRAG}, {"weaviate-client", "vector-store", FamilyRAG},
	{"faiss-cpu", "vector-store", FamilyRAG}, {"llama-index", "retrieval-framework", FamilyRAG}, {"llamaindex", "retrieval-framework", FamilyRAG},
	// web
	{"next", "web-framework", FamilyWeb}, {"react", "web-framework", FamilyWeb}, {"vue", "web-framework", FamilyWeb},
	{"svelte", "web-framework", FamilyWeb}, {"@playwright/test", "browser-tests", FamilyWeb}, {"playwright", "browser-tests", FamilyWeb},
	{"express", "http-server", FamilyWeb}, {"fastify", "http-server", FamilyWeb}, {"koa", "http-server", FamilyWeb}, {"hono", "http-server", FamilyWeb},
	{"github.com/chromedp/chromedp", "browser-tests", FamilyWeb}, {"github.com/gin-gonic/gin", "http-server", FamilyWeb},
	{"github.com/labstack/echo/", "http-server", FamilyWeb}, {"github.com/go-chi/chi/", "http-server", FamilyWeb},
	{"fastapi", "http-server", FamilyWeb}, {"flask", "http-server", FamilyWeb}, {"django", "http-server", FamilyWeb},
	// security
	{"jsonwebtoken", "auth", FamilySecurity}, {"pyjwt", "auth", FamilySecurity}, {"python-jose", "auth", FamilySecurity}, {"github.com/golang-jwt/jwt/", "auth", FamilySecurity}, {"passport", "auth", FamilySecurity},
	{"bcrypt", "auth", FamilySecurity}, {"golang.org/x/crypto", "crypto", FamilySecurity}, {"golang.org/x/oauth2", "auth", FamilySecurity},
	// SSH servers: a listener that takes logins is a network service and
	// an authentication surface at once.
	{"github.com/charmbracelet/wish", "ssh-server", FamilySecurity}, {"github.com/charmbracelet/wish/", "ssh-server", FamilySecurity},
	{"charm.land/wish/", "ssh-server", FamilySecurity}, {"github.com/gliderlabs/ssh", "ssh-server", FamilySecurity},
	{"charm.land/ssh", "ssh-server", FamilySecurity},
	// terminal apps and the SSH servers that serve them
	{"github.com/charmbracelet/wish", "ssh-server", FamilyTerminal}, {"github.com/charmbracelet/ssh", "ssh-server", FamilyTerminal},
	{"github.com/gliderlabs/ssh", "ssh-server", FamilyTerminal}, {"github.com/charmbracelet/bubbletea", "tui", FamilyTerminal},
	{"github.com/charmbracelet/bubbletea/", "tui", FamilyTerminal}, {"github.com/charmbracelet/wish/", "ssh-server", FamilyTerminal},
	{"charm.land/wish/", "ssh-server", FamilyTerminal}, {"charm.land/bubbletea/", "tui", FamilyTerminal},
	// windows
	{"github.com/kardianos/service", "service-manager", FamilyWindows},
}

var ciKinds = map[string]string{".gitlab-ci.yml": "gitlab-ci", ".circleci": "circleci", "Jenkinsfile": "jenkins", "azure-pipelines.yml": "azure-pipelines", ".buildkite": "buildkite"}

// dataKinds are the dependency kinds that are data stores.
var dataKinds = map[string]bool{"postgres": true, "mysql": true, "sqlite": true, "orm": true, "redis": true, "mongodb": true, "vector-store": true}

// scanner accumulates signals over the profiled files.
type scanner struct {
	root                                               string
	stacks, entry, tests, ci, docs, data, network      map[Signal]bool
	hintPaths                                          map[[2]string][]string
	hashes                                             map[string]string
	goTestDirs, jsTestDirs, migrationDirs, promptPaths map[string]bool
	alembicDirs                                        map[string]bool
}

func newScanner(root string) *scanner {
	return &scanner{
		root: root, stacks: map[Signal]bool{}, entry: map[Signal]bool{}, tests: map[Signal]bool{}, ci: map[Signal]bool{},
		docs: map[Signal]bool{}, data: map[Signal]bool{}, network: map[Signal]bool{}, hintPaths: map[[2]string][]string{},
		hashes: map[string]string{}, goTestDirs: map[string]bool{}, jsTestDirs: map[string]bool{}, migrationDirs: map[string]bool{},
		promptPaths: map[string]bool{}, alembicDirs: map[string]bool{},
	}
}

func (s *scanner) hint(family, signal, p string) {
	if family == "" {
		return
	}
	k := [2]string{family, signal}
	if !slices.Contains(s.hintPaths[k], p) {
		s.hintPaths[k] = append(s.hintPaths[k], p)
	}
}

// read returns the content of a profiled file, or nil when it is too
// large or unreadable; it records the file's hash for the profile id.
func (s *scanner) read(p string) []byte {
	fp := filepath.Join(s.root, filepath.FromSlash(p))
	st, err := os.Stat(fp)
	if err != nil {
		return nil
	}
	if st.Size() > maxScan {
		return nil
	}
	data, err := os.ReadFile(fp)
	if err != nil {
		return nil
	}
	s.hashes[p] = hashBytes(data)
	return data
}

// hash is the content hash of p, streamed from the file when the scan
// did not read it, so a large file costs no more memory than a small one.
func (s *scanner) hash(p string) string {
	if h, ok := s.hashes[p]; ok {
		return h
	}
	f, err := os.Open(filepath.Join(s.root, filepath.FromSlash(p)))
	if err != nil {
		return "unreadable"
	}
	defer f.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return "unreadable"
	}
	h := hex.EncodeToString(sum.Sum(nil))
	s.hashes[p] = h
	return h
}

var (
	goMainRe   = regexp.MustCompile(`(?m)^package main\b`)
	goHTTPRe   = regexp.MustCompile(`\bhttp\.(ListenAndServe|ListenAndServeTLS|HandleFunc|NewServeMux|Server\{)`)
	goBenchRe  = regexp.MustCompile(`(?m)^func Benchmark\w*\(`)
	goCgoRe    = regexp.MustCompile(`(?m)^import "C"`)
	goWinSvcRe = regexp.MustCompile(`golang\.org/x/sys/windows/svc`)
	// goSSHImportRe finds golang.org/x/crypto/ssh and the name it is
	// imported as (servers often alias it, gossh "golang.org/x/crypto/ssh").
	goSSHImportRe = regexp.MustCompile(`(?m)^\s*(?:import\s+)?(\w+\s+)?"golang\.org/x/crypto/ssh"`)
	exposeRe      = regexp.MustCompile(`(?mi)^\s*EXPOSE\s+(.+)$`)
	entryRe       = regexp.MustCompile(`(?m)^\s*(ENTRYPOINT|CMD)\s+(.+)$`)
	sqlDropRe     = regexp.MustCompile(`(?i)\b(DROP\s+(TABLE|COLUMN|INDEX)|TRUNCATE)\b`)
	securityRe    = regexp.MustCompile(`(^|[/_.-])(auth|oauth|jwt|login|csrf|password|passwd|credential|credentials|token|tokens)([/_.-]|$)`)
	retrievalRe   = regexp.MustCompile(`(^|[/_.-])(embedding|embeddings|retriever|retrieval|vectorstore|chunker|chunking|rerank|reranker)([/_.-]|$)`)
	composeRe     = regexp.MustCompile(`^(docker-)?compose(\.[\w-]+)?\.ya?ml$`)
	deployRe      = regexp.MustCompile(`^deploy[\w.-]*\.(sh|ya?ml)$`)
)

// file looks at one profiled file.
func (s *scanner) file(p string) {
	base := path.Base(p)
	dir := path.Dir(p)
	lower := strings.ToLower(p)
	ext := strings.ToLower(path.Ext(p))
	add := func(m map[Signal]bool, kind, detail string) { m[Signal{Kind: kind, Path: p, Detail: detail}] = true }

	switch {
	case base == "go.mod":
		data := s.read(p)
		add(s.stacks, "go", modulePath(data))
		for _, d := range goRequires(data) {
			s.dep(p, d)
		}
	case base == "package.json":
		s.packageJSON(p)
	case base == "Cargo.toml":
		add(s.stacks, "rust", "")
		for _, d := range tomlDeps(s.read(p)) {
			s.dep(p, d)
		}
	case base == "pyproject.toml" || base == "requirements.txt" || base == "setup.py" || base == "setup.cfg":
		add(s.stacks, "python", "")
		data := s.read(p)
		deps := tomlDeps(data)
		if base == "requirements.txt" {
			deps = requirementNames(data)
		}
		for _, d := range deps {
			s.dep(p, d)
		}
		for _, e := range pythonScripts(base, data) {
			add(s.entry, "python-script", e)
		}
	case base == "alembic.ini":
		// Alembic's migrations live wherever script_location says; the
		// env.py beside them is found below.
		s.hint(FamilyDatabase, "migrations", p)
	case base == "flake.nix" || base == "shell.nix" || base == "default.nix":
		add(s.stacks, "nix", "")
		s.hint(FamilyInfrastructure, "nix", p)
	case base == "Dockerfile" || strings.HasSuffix(base, ".Dockerfile") || strings.HasPrefix(base, "Dockerfile."):
		add(s.stacks, "docker", "")
		s.hint(FamilyInfrastructure, "container", p)
		data := s.read(p)
		for _, m := range exposeRe.FindAllSubmatch(data, -1) {
			add(s.network, "exposed-port", strings.TrimSpace(string(m[1])))
		}
		if m := entryRe.FindSubmatch(data); m != nil {
			add(s.entry, "container", strings.TrimSpace(string(m[2])))
		}
	case composeRe.MatchString(base):
		add(s.stacks, "compose", "")
		s.hint(FamilyInfrastructure, "container", p)
		s.compose(p)
	case strings.HasPrefix(p, ".devcontainer/") || base == ".devcontainer.json":
		add(s.stacks, "devcontainer", "")
		s.hint(FamilyInfrastructure, "devcontainer", p)
	case strings.HasPrefix(p, ".github/workflows/") && (ext == ".yml" || ext == ".yaml"):
		add(s.ci, "github-actions", "")
		s.hint(FamilyInfrastructure, "ci", p)
	case p == ".gitlab-ci.yml" || p == ".circleci/config.yml" || p == "Jenkinsfile" || p == "azure-pipelines.yml" || strings.HasPrefix(p, ".buildkite/"):
		add(s.ci, ciKinds[strings.SplitN(p, "/", 2)[0]], "")
		s.hint(FamilyInfrastructure, "ci", p)
	case isLintConfig(base):
		add(s.ci, "lint", strings.TrimPrefix(strings.TrimSuffix(base, path.Ext(base)), "."))
	case s.isCIScript(p, base, ext):
		// CI that lives in a script the hosted workflow only calls
		// (.ci/run, ci/test.sh): the commands CI runs are in it.
		add(s.ci, "ci-script", "")
		s.hint(FamilyInfrastructure, "ci", p)
	case ext == ".tf":
		s.hint(FamilyInfrastructure, "terraform", p)
	case deployRe.MatchString(base):
		s.hint(FamilyInfrastructure, "deploy-script", p)
	case base == ".mcp.json" || base == "mcp.json" || base == "claude_desktop_config.json" || p == ".cursor/mcp.json":
		add(s.network, "mcp", mcpServers(s.read(p)))
		s.hint(FamilyAgent, "mcp-config", p)
	case strings.HasPrefix(base, "playwright.config."):
		add(s.tests, "playwright", "")
		s.hint(FamilyWeb, "browser-tests", p)
	case base == "index.html" && !strings.Contains(p, "testdata/") && !strings.Contains(p, "node_modules/"):
		// A page a browser can open as it is: the web-app kit serves its
		// directory and drives it.
		add(s.entry, "static-site", dir)
		s.hint(FamilyWeb, "static-site", p)
	}

	// Documents.
	if ext == ".md" || ext == ".adoc" || ext == ".rst" {
		switch up := strings.ToUpper(strings.TrimSuffix(base, path.Ext(base))); {
		case dir == "." && up == "README":
			add(s.docs, "readme", "")
		case up == "SPEC" || up == "ARCHITECTURE" || up == "DESIGN":
			add(s.docs, strings.ToLower(up), "")
		case up == "AGENTS" || up == "CLAUDE" || up == "GEMINI":
			add(s.docs, "agent-instructions", "")
			s.hint(FamilyAgent, "agent-instructions", p)
		case strings.Contains(lower, "/adr/") || strings.HasPrefix(lower, "adr/") || strings.Contains(lower, "/decisions/"):
			add(s.docs, "adr", "")
		case strings.Contains(lower, "runbook"):
			add(s.docs, "runbook", "")
		case strings.HasPrefix(p, "docs/") || strings.HasPrefix(p, "doc/"):
			add(s.docs, "doc", "")
		}
	}

	// Prompts are agent behaviour written as text.
	if strings.HasPrefix(p, "prompts/") || strings.Contains(p, "/prompts/") || strings.HasSuffix(lower, ".prompt") || strings.HasSuffix(lower, ".prompt.md") {
		if !s.promptPaths[dir] {
			s.promptPaths[dir] = true
			s.docs[Signal{Kind: "prompts", Path: dir}] = true
		}
		s.hint(FamilyAgent, "prompts", p)
	}

	// Migrations and SQL. Alembic's env.py marks its directory as a
	// migrations directory whatever it is called; the listing is sorted,
	// so env.py is seen before the versions/ beside it.
	if base == "env.py" && alembicEnvRe.Match(s.read(p)) {
		s.alembicDirs[dir] = true
	}
	if alembic := s.alembicRoot(p); isMigration(p) || alembic != "" {
		migrations := dir
		if alembic != "" {
			migrations = alembic
		}
		if !s.migrationDirs[migrations] {
			s.migrationDirs[migrations] = true
			s.data[Signal{Kind: "migrations", Path: migrations}] = true
		}
		s.hint(FamilyDatabase, "migrations", p)
		if ext == ".sql" && sqlDropRe.Match(s.read(p)) {
			s.hint(FamilyDatabase, "destructive-sql", p)
		}
	} else if ext == ".sql" {
		s.hint(FamilyDatabase, "sql", p)
	}

	// Security and retrieval by name.
	if securityRe.MatchString(strings.ToLower(strings.TrimSuffix(p, path.Ext(p)))) && !strings.Contains(p, "testdata/") {
		s.hint(FamilySecurity, "auth-code", p)
	}
	if base == ".env" || strings.HasPrefix(base, ".env.") {
		s.hint(FamilySecurity, "env-file", p)
	}
	if retrievalRe.MatchString(strings.ToLower(strings.TrimSuffix(p, path.Ext(p)))) {
		s.hint(FamilyRAG, "retrieval-code", p)
	}
	if ext == ".ps1" {
		s.hint(FamilyWindows, "powershell", p)
	}
	if base == "binding.gyp" || base == "build.rs" {
		s.hint(FamilyPerformance, "native-binding", p)
	}

	switch ext {
	case ".go":
		s.goFile(p, base, dir)
	case ".ts", ".tsx", ".js", ".mjs", ".cjs", ".jsx":
		if strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || strings.HasPrefix(dir, "test/") || dir == "test" || strings.HasPrefix(dir, "tests/") || dir == "tests" || strings.Contains(p, "__tests__/") {
			if !s.jsTestDirs[dir] {
				s.jsTestDirs[dir] = true
				s.tests[Signal{Kind: "js-test", Path: dir}] = true
			}
		}
		if ext == ".tsx" || ext == ".jsx" {
			s.hint(FamilyWeb, "ui-components", p)
		}
	case ".py":
		if strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") {
			s.tests[Signal{Kind: "pytest", Path: dir}] = true
		}
	case ".css", ".scss":
		s.hint(FamilyWeb, "stylesheets", p)
	case ".txtar":
		if strings.HasSuffix(dir, "testdata/script") {
			s.tests[Signal{Kind: "testscript", Path: dir}] = true
		}
	}
}

func (s *scanner) goFile(p, base, dir string) {
	if strings.HasSuffix(base, "_windows.go") {
		s.hint(FamilyWindows, "windows-source", p)
	}
	data := s.read(p)
	if strings.HasSuffix(base, "_test.go") {
		if !s.goTestDirs[dir] {
			s.goTestDirs[dir] = true
			s.tests[Signal{Kind: "go-test", Path: dir}] = true
		}
		if goBenchRe.Match(data) {
			s.hint(FamilyPerformance, "benchmarks", p)
		}
		return
	}
	if goMainRe.Match(data) {
		s.entry[Signal{Kind: "go-main", Path: dir}] = true
	}
	if goHTTPRe.Match(data) {
		s.network[Signal{Kind: "http-server", Path: p}] = true
		s.hint(FamilyWeb, "http-server", p)
	}
	if goCgoRe.Match(data) {
		s.hint(FamilyPerformance, "cgo", p)
	}
	if goWinSvcRe.Match(data) {
		s.hint(FamilyWindows, "service-manager", p)
	}
	if goSSHServer(data) {
		s.network[Signal{Kind: "ssh-server", Path: p}] = true
		s.hint(FamilySecurity, "ssh-server", p)
	}
}

// goSSHServer reports golang.org/x/crypto/ssh used as a server: only a
// server builds a ServerConfig or accepts a connection with one; a client
// dials with a ClientConfig.
func goSSHServer(data []byte) bool {
	m := goSSHImportRe.FindSubmatch(data)
	if m == nil {
		return false
	}
	name := strings.TrimSpace(string(m[1]))
	if name == "" {
		name = "ssh"
	}
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\.(ServerConfig\b|NewServerConn\()`).Match(data)
}

// dep records a dependency named in the manifest at p.
func (s *scanner) dep(p, name string) {
	for _, r := range depRules {
		match := name == r.dep || (strings.HasSuffix(r.dep, "/") && strings.HasPrefix(name, r.dep))
		if !match || r.family == "" {
			continue
		}
		if dataKinds[r.kind] {
			s.data[Signal{Kind: r.kind, Path: p, Detail: name}] = true
		}
		if r.kind == "http-server" || r.kind == "mcp-sdk" || r.kind == "ssh-server" {
			s.network[Signal{Kind: r.kind, Path: p, Detail: name}] = true
		}
		s.hint(r.family, r.kind, p)
	}
}

func (s *scanner) packageJSON(p string) {
	data := s.read(p)
	var pkg struct {
		Name            string            `json:"name"`
		Main            string            `json:"main"`
		Bin             json.RawMessage   `json:"bin"`
		Scripts         map[string]string `json:"scripts"`
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		s.stacks[Signal{Kind: "node", Path: p, Detail: "unparsable package.json"}] = true
		return
	}
	kind := "node"
	if _, ok := pkg.DevDependencies["typescript"]; ok {
		kind = "typescript"
	} else if _, ok := pkg.Dependencies["typescript"]; ok {
		kind = "typescript"
	}
	s.stacks[Signal{Kind: kind, Path: p, Detail: pkg.Name}] = true
	var bins map[string]string
	var one string
	if json.Unmarshal(pkg.Bin, &bins) == nil {
		for name, target := range bins {
			s.entry[Signal{Kind: "npm-bin", Path: p, Detail: name + " -> " + target}] = true
		}
	} else if json.Unmarshal(pkg.Bin, &one) == nil {
		s.entry[Signal{Kind: "npm-bin", Path: p, Detail: pkg.Name + " -> " + one}] = true
	}
	if pkg.Main != "" {
		s.entry[Signal{Kind: "npm-main", Path: p, Detail: pkg.Main}] = true
	}
	for name, cmd := range pkg.Scripts {
		if tool := devServerTool(cmd); tool != "" && (name == "dev" || name == "start" || name == "serve") {
			s.entry[Signal{Kind: "dev-server", Path: p, Detail: name + ": " + tool}] = true
			s.hint(FamilyWeb, "dev-server", p)
		}
		switch {
		case name == "test" || strings.HasPrefix(name, "test:"):
			s.tests[Signal{Kind: "npm-script", Path: p, Detail: name + ": " + cmd}] = true
		case name == "lint" || name == "typecheck" || name == "build":
			s.ci[Signal{Kind: "npm-script", Path: p, Detail: name + ": " + cmd}] = true
		}
	}
	for _, deps := range []map[string]string{pkg.Dependencies, pkg.DevDependencies} {
		for name := range deps {
			s.dep(p, name)
		}
	}
}

// devServers are the front-end dev servers a package script may start,
// by the word that names them in the script.
var devServers = []string{"vite", "next", "react-scripts", "webpack-dev-server", "webpack serve", "astro", "nuxt", "parcel", "svelte-kit", "ng serve", "vue-cli-service"}

// devServerTool is the dev server a package script starts, or "".
func devServerTool(cmd string) string {
	for _, t := range devServers {
		for _, f := range strings.Split(cmd, "&&") {
			if f = strings.TrimSpace(f); f == t || strings.HasPrefix(f, t+" ") || strings.HasPrefix(f, "npx "+t) {
				return strings.Fields(t)[0]
			}
		}
	}
	return ""
}

// compose records the services of a compose file by their images.
func (s *scanner) compose(p string) {
	data := string(s.read(p))
	for _, line := range strings.Split(data, "\n") {
		t := strings.TrimSpace(line)
		if img, ok := strings.CutPrefix(t, "image:"); ok {
			img = strings.Trim(strings.TrimSpace(img), `"'`)
			name := path.Base(strings.SplitN(img, ":", 2)[0])
			for _, db := range []string{"postgres", "mysql", "mariadb", "redis", "mongo", "qdrant", "chromadb"} {
				if strings.HasPrefix(name, db) {
					s.data[Signal{Kind: db, Path: p, Detail: img}] = true
					s.hint(FamilyDatabase, "compose-service", p)
				}
			}
		}
		if strings.HasPrefix(t, "ports:") {
			s.network[Signal{Kind: "exposed-port", Path: p}] = true
		}
	}
}

func isLintConfig(base string) bool {
	switch base {
	case ".golangci.yml", ".golangci.yaml", ".golangci.toml", "staticcheck.conf", "biome.json", "ruff.toml", ".pre-commit-config.yaml", "clippy.toml", ".rustfmt.toml", "rustfmt.toml":
		return true
	}
	return strings.HasPrefix(base, ".eslintrc") || strings.HasPrefix(base, "eslint.config.") || strings.HasPrefix(base, ".prettierrc")
}

// alembicEnvRe is the import an Alembic env.py cannot do without.
var alembicEnvRe = regexp.MustCompile(`(?m)^\s*from\s+alembic\s+import\s+.*\bcontext\b`)

// alembicRoot is the Alembic migrations directory holding p (its env.py
// or a file under it), or "".
func (s *scanner) alembicRoot(p string) string {
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if s.alembicDirs[d] {
			return d
		}
	}
	return ""
}

// isCIScript reports a script CI runs from the repository rather than
// from workflow YAML: anything shell-like under .ci/ or ci/, and
// scripts/ci* (scripts/ci, scripts/ci-test.sh). Without a .sh suffix the
// file must be executable, so notes and configs there are not scripts.
func (s *scanner) isCIScript(p, base, ext string) bool {
	underCI := strings.HasPrefix(p, ".ci/") || strings.HasPrefix(p, "ci/")
	if !underCI && !(path.Dir(p) == "scripts" && strings.HasPrefix(base, "ci")) {
		return false
	}
	if ext == ".sh" || ext == ".bash" {
		return true
	}
	if ext != "" {
		return false
	}
	st, err := os.Stat(filepath.Join(s.root, filepath.FromSlash(p)))
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

var (
	// pyScriptsTableRe opens the TOML tables of console scripts: PEP 621
	// [project.scripts] and Poetry's [tool.poetry.scripts].
	pyScriptsTableRe = regexp.MustCompile(`^\[(project\.scripts|tool\.poetry\.scripts)\]\s*$`)
	pyScriptLineRe   = regexp.MustCompile(`^\s*"?([A-Za-z0-9_.-]+)"?\s*=\s*["']([^"']+)["']`)
	cfgScriptLineRe  = regexp.MustCompile(`^\s+([A-Za-z0-9_.-]+)\s*=\s*(\S+)\s*$`)
	setupPyScriptRe  = regexp.MustCompile(`["']\s*([A-Za-z0-9_.-]+)\s*=\s*([A-Za-z0-9_.]+:[A-Za-z0-9_.]+)\s*["']`)
)

// pythonScripts lists the console scripts a Python manifest installs, as
// "name -> module:function": they are the commands the package puts on
// PATH, its entry points.
func pythonScripts(base string, data []byte) []string {
	var list []string
	lines := strings.Split(string(data), "\n")
	switch base {
	case "pyproject.toml":
		in := false
		for _, l := range lines {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "[") {
				in = pyScriptsTableRe.MatchString(t)
				continue
			}
			if m := pyScriptLineRe.FindStringSubmatch(l); in && m != nil {
				list = append(list, m[1]+" -> "+m[2])
			}
		}
	case "setup.cfg":
		// console_scripts = followed by indented "name = target" lines.
		in := false
		for _, l := range lines {
			t := strings.TrimSpace(l)
			switch {
			case strings.HasPrefix(t, "console_scripts"):
				in = true
			case in && t != "" && strings.HasPrefix(l, " ") || in && strings.HasPrefix(l, "\t"):
				if m := cfgScriptLineRe.FindStringSubmatch(l); m != nil {
					list = append(list, m[1]+" -> "+m[2])
				}
			case t != "":
				in = false
			}
		}
	case "setup.py":
		// The list after "console_scripts", up to its closing bracket.
		text := string(data)
		for {
			i := strings.Index(text, "console_scripts")
			if i < 0 {
				break
			}
			text = text[i+len("console_scripts"):]
			end := strings.Index(text, "]")
			if end < 0 {
				end = len(text)
			}
			for _, m := range setupPyScriptRe.FindAllStringSubmatch(text[:end], -1) {
				list = append(list, m[1]+" -> "+m[2])
			}
		}
	}
	return list
}

func isMigration(p string) bool {
	for _, seg := range strings.Split(path.Dir(p), "/") {
		if seg == "migrations" || seg == "migrate" || seg == "migration" {
			return true
		}
	}
	return false
}

var (
	moduleRe  = regexp.MustCompile(`(?m)^module\s+(\S+)`)
	requireRe = regexp.MustCompile(`(?m)^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]{2,}/\S+)\s+v\S+`)
	tomlDepRe = regexp.MustCompile(`(?m)^\s*"?([A-Za-z0-9_.@/-]+)"?\s*(=|>=|==|~=|<|>|\^)`)
	pyDepRe   = regexp.MustCompile(`"([A-Za-z0-9_.-]+)\s*[\[<>=~!;"]`)
)

func modulePath(data []byte) string {
	if m := moduleRe.FindSubmatch(data); m != nil {
		return string(m[1])
	}
	return ""
}

// goRequires lists the module's direct requirements: an indirect one is
// a dependency of a dependency and says nothing about what this code does.
func goRequires(data []byte) []string {
	var list []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "// indirect") {
			continue
		}
		if m := requireRe.FindStringSubmatch(line); m != nil {
			list = append(list, m[1])
		}
	}
	return list
}

// tomlDeps is a name-level reading of Cargo.toml and pyproject.toml
// dependencies (keys of dependency tables and quoted requirement
// strings); a miss only loses a hint, so no full TOML parse is needed.
func tomlDeps(data []byte) []string {
	var list []string
	for _, m := range tomlDepRe.FindAllSubmatch(data, -1) {
		list = append(list, strings.ToLower(string(m[1])))
	}
	for _, m := range pyDepRe.FindAllSubmatch(data, -1) {
		list = append(list, strings.ToLower(string(m[1])))
	}
	return list
}

// requirementRe is the distribution name a requirements.txt line starts
// with; a bare name (no version pin) is a requirement too.
var requirementRe = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*(\[|[<>=~!;@ ]|$)`)

// requirementNames lists the distributions a requirements.txt names,
// lower-cased as the dependency rules are; options (-r, -e, --hash) and
// comments are not requirements.
func requirementNames(data []byte) []string {
	var list []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if m := requirementRe.FindStringSubmatch(line); m != nil {
			list = append(list, strings.ToLower(m[1]))
		}
	}
	return list
}

// mcpServers names the servers of an MCP client configuration.
func mcpServers(data []byte) string {
	var cfg struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Servers    map[string]json.RawMessage `json:"servers"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return ""
	}
	var names []string
	for n := range cfg.MCPServers {
		names = append(names, n)
	}
	for n := range cfg.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

func (s *scanner) sorted(m map[Signal]bool) []Signal {
	list := make([]Signal, 0, len(m))
	for sig := range m {
		list = append(list, sig)
	}
	slices.SortFunc(list, func(a, b Signal) int {
		return strings.Compare(a.Kind+"\x00"+a.Path+"\x00"+a.Detail, b.Kind+"\x00"+b.Path+"\x00"+b.Detail)
	})
	return list
}

func (s *scanner) hints() []RiskHint {
	list := []RiskHint{}
	for k, paths := range s.hintPaths {
		slices.Sort(paths)
		h := RiskHint{Family: k[0], Signal: k[1], Count: len(paths), Paths: paths}
		if len(paths) > maxHintPaths {
			h.Paths = paths[:maxHintPaths]
		}
		list = append(list, h)
	}
	order := map[string]int{}
	for i, f := range Families {
		order[f] = i
	}
	slices.SortFunc(list, func(a, b RiskHint) int {
		if a.Family != b.Family {
			return order[a.Family] - order[b.Family]
		}
		return strings.Compare(a.Signal, b.Signal)
	})
	return list
}
