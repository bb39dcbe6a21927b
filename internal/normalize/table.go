package normalize

import "strings"

// The built-in table. Each map is keyed by an agent's tool name or by a
// command head (program plus subcommands, one space between words); a
// program's entries apply to all its heads unless a longer head has its
// own. The words are listed as space-separated strings so that the table
// reads like the commands it describes.

// shellTools are the tools whose "command" (or "cmd") argument is a shell
// command: a string for Claude Code and most OpenTelemetry tools, an argv
// list for Codex.
var shellTools = wordSet(`Bash bash shell local_shell_call local_shell run_shell shell_command exec_command
	run_terminal_cmd execute_command terminal
	PowerShell powershell`)

// fileTools are the tools that write files; fileToolPathKeys are the
// argument keys that may hold the path they write.
var fileTools = wordSet(`Edit Write MultiEdit NotebookEdit apply_patch edit_file write_file create_file
	str_replace_based_edit_tool str_replace_editor replace_in_file replace`)

var fileToolPathKeys = []string{"file_path", "path", "notebook_path", "filename", "target_file", "file"}

// patchKeys are the argument keys that may hold an apply_patch patch.
var patchKeys = []string{"input", "patch", "command"}

// questionTools are the tools with which an agent asks the person it
// works for to choose between alternatives (Claude Code's
// AskUserQuestion): a human decision, not a tool the workflow calls.
var questionTools = wordSet(`AskUserQuestion`)

// observations are the read-only tools and command heads: they change
// nothing, so mining treats them as noise between steps. A program listed
// here covers all its heads (cat), a head covers only itself (git status).
// sed and find are read-only unless they edit in place or run or delete
// (see readOnly).
var observations = wordSet(`Read Grep Glob LS TodoWrite TodoRead WebSearch web_search NotebookRead BashOutput ExitPlanMode
	update_plan view_image read_file read_many_files list_files list_dir list_directory search_files
	search_file_content google_web_search grep glob read
	cat head tail less more rg grep egrep fgrep ag ls find fd tree pwd wc echo printf which type whereis
	file stat du df date whoami uname hostname env printenv true : sed awk jq yq sort uniq cut tr diff cmp
	realpath readlink dirname basename test [ nl column od xxd hexdump sha256sum sha1sum md5sum cd command
	git:status git:log git:diff git:show git:blame git:rev-parse git:ls-files git:grep git:describe
	git:shortlog git:reflog git:remote git:branch
	go:env go:list go:doc go:version
	gh:pr:view gh:pr:list gh:pr:diff gh:pr:checks gh:pr:status gh:issue:view gh:issue:list gh:issue:status
	gh:run:view gh:run:list gh:run:watch gh:repo:view gh:release:view gh:release:list gh:search
	kubectl:get kubectl:describe kubectl:logs docker:ps docker:images docker:logs docker:inspect
	npm:ls npm:view npm:list pip:list pip:show pip:freeze cargo:tree
	WebFetch ToolSearch ListMcpResourcesTool ReadMcpResourceTool web_search_call web_search web_fetch`)

// mcpReadVerbs are the words that, first in an MCP tool's own name
// (mcp__github__get_issue, mcp__notion__search_pages), say it only reads;
// mcpReadSuffixes say it at the end (mcp__m365__outlook_calendar_search).
// mcpWriteWords anywhere in the name undo it (get_or_create_branch). See
// mcpReadOnly.
var (
	mcpReadVerbs    = wordSet(`get list read search describe fetch find view show lookup query count`)
	mcpReadSuffixes = wordSet(`search list lookup`)
	mcpWriteWords   = wordSet(`create update delete remove set send post put patch write add edit move upload
		run execute exec merge push comment close assign insert replace apply deploy approve cancel`)
)

// filters are the programs that, as a later stage of a pipeline, only
// shape what the stage before them printed; they are recorded in that
// stage's metadata instead of becoming actions.
var filters = wordSet(`grep egrep fgrep rg head tail wc sort uniq cut tr jq yq awk sed column nl less more
	cat fold fmt rev tac`)

// heads gives, for a program or a head, how many subcommand words follow
// it. Heads nest: "go" takes one word, and "go mod" one more, which makes
// "go mod tidy". A subcommand word is a plain word (a letter first, then
// letters, digits, ".", "_", ":" or "-"); a flag or a path ends the head.
var heads = map[string]int{
	"git": 1, "git remote": 1, "git stash": 1, "git worktree": 1, "git submodule": 1, "git bisect": 1,
	"git lfs": 1, "git notes": 1, "git sparse-checkout": 1,
	"go": 1, "go mod": 1, "go work": 1, "go tool": 1,
	"gh": 1, "gh pr": 1, "gh issue": 1, "gh release": 1, "gh repo": 1, "gh run": 1, "gh workflow": 1,
	"gh auth": 1, "gh label": 1, "gh secret": 1, "gh variable": 1, "gh gist": 1, "gh search": 1,
	"gh project": 1, "gh cache": 1, "gh codespace": 1, "gh extension": 1, "gh ruleset": 1,
	"npm": 1, "npm run": 1, "npm run-script": 1, "pnpm": 1, "pnpm run": 1, "yarn": 1, "yarn run": 1,
	"yarn workspace": 1, "bun": 1, "bun run": 1, "npx": 1, "pnpx": 1, "bunx": 1, "deno": 1, "deno task": 1,
	"cargo": 1, "rustup": 1, "rustup toolchain": 1, "rustup target": 1, "rustup component": 1,
	"docker": 1, "docker compose": 1, "docker image": 1, "docker container": 1, "docker network": 1,
	"docker volume": 1, "docker buildx": 1, "docker-compose": 1, "podman": 1,
	"kubectl": 1, "kubectl rollout": 1, "kubectl config": 1, "helm": 1, "helm repo": 1, "terraform": 1,
	"pip": 1, "pip3": 1, "uv": 1, "uv run": 1, "uv pip": 1, "poetry": 1, "poetry run": 1, "pipx": 1,
	"conda": 1, "brew": 1, "apt": 1, "apt-get": 1, "systemctl": 1, "dotnet": 1, "bundle": 1,
	"bundle exec": 1, "rails": 1, "mix": 1, "aws": 2, "gcloud": 2, "az": 2, "gsutil": 1,
}

// moduleRunners are interpreters whose "-m MODULE" names what runs:
// "python -m pytest" is a head of its own.
var moduleRunners = wordSet(`python python3 python2 py`)

// singleDashLong are programs whose long flags take one dash (go test
// -run, find -name): for them "-run" is one flag, not the short flags
// r, u and n.
var singleDashLong = wordSet(`go find terraform java gofmt goimports staticcheck`)

// valueFlags lists, per program or head, the flags that take the next
// word as their value. Any other flag given without "=value" is a boolean:
// a flag the table does not know leaves the word after it an operand,
// which keeps the argv template exact either way.
var valueFlags = map[string]map[string]bool{
	"git":              wordSet(`C c git-dir work-tree namespace`),
	"git commit":       wordSet(`C c m message F file author date fixup squash cleanup t template trailer`),
	"git checkout":     wordSet(`C c b B orphan`),
	"git switch":       wordSet(`C c B orphan`),
	"git tag":          wordSet(`C c m message F file u local-user`),
	"git log":          wordSet(`C c n max-count format pretty since until after before author committer grep skip`),
	"git show":         wordSet(`C c format pretty`),
	"git push":         wordSet(`C c o push-option repo receive-pack`),
	"git pull":         wordSet(`C c depth`),
	"git fetch":        wordSet(`C c depth`),
	"git clone":        wordSet(`C c b branch depth origin o reference config`),
	"git worktree add": wordSet(`C c b B`),
	"git stash push":   wordSet(`C c m message`),
	"git branch":       wordSet(`C c u set-upstream-to`),
	"git rebase":       wordSet(`C c onto x exec`),
	"git merge":        wordSet(`C c m message F file s strategy X strategy-option`),
	"git diff":         wordSet(`C c U unified`),
	"git remote add":   wordSet(`C c t m`),
	"git config":       wordSet(`C c file f`),
	"gh": wordSet(`R repo t title b body B base H head l label a assignee m milestone r reviewer F body-file
		json jq q template L limit s state A author S search p project c comment e editor w workflow
		n notes target branch add-label remove-label add-assignee remove-assignee add-reviewer remove-reviewer
		add-project remove-project notes-file`),
	"go":        wordSet(`run count bench benchtime benchmem timeout tags coverprofile coverpkg covermode p cpu o ldflags gcflags asmflags C modfile mod exec fuzz fuzztime parallel shuffle vet outputdir`),
	"npm":       wordSet(`w workspace prefix registry tag otp C`),
	"pnpm":      wordSet(`C dir filter F w workspace`),
	"yarn":      wordSet(`cwd`),
	"cargo":     wordSet(`p package features F target bin j jobs example test bench manifest-path color Z`),
	"docker":    wordSet(`t tag f file e env v volume p publish name network w workdir platform u user entrypoint label l build-arg target cpus m memory`),
	"kubectl":   wordSet(`n namespace f filename o output l selector c container context image replicas k kubeconfig`),
	"helm":      wordSet(`n namespace f values set version kube-context`),
	"grep":      wordSet(`e f A B C m regexp file context after-context before-context max-count include exclude exclude-dir`),
	"rg":        wordSet(`e f A B C m g t T regexp file context after-context before-context max-count glob type type-not max-depth`),
	"sed":       wordSet(`e f expression file`),
	"head":      wordSet(`n c lines bytes`),
	"tail":      wordSet(`n c lines bytes`),
	"curl":      wordSet(`X request H header d data data-raw data-binary o output u user A user-agent F form e referer m max-time`),
	"make":      wordSet(`C f j directory file jobs`),
	"pip":       wordSet(`r requirement i index-url c constraint e editable t target`),
	"pip3":      wordSet(`r requirement i index-url c constraint e editable t target`),
	"python":    wordSet(`c W X`),
	"python3":   wordSet(`c W X`),
	"find":      wordSet(`name iname type path ipath maxdepth mindepth newer mtime mmin size user perm regex wholename`),
	"xargs":     wordSet(`n I P L d`),
	"jq":        wordSet(`arg argjson f`),
	"awk":       wordSet(`F v f`),
	"sort":      wordSet(`k t o`),
	"cut":       wordSet(`d f c b`),
	"tar":       wordSet(`f C`),
	"terraform": wordSet(`var var-file target chdir out`),
}

// shortFlagNames gives, per head, the long name of a short flag, which
// names its parameter: "git commit -m MSG" has the parameter message and
// "gh pr create -t T" the parameter title, as the long forms
// (--message, --title) would. Only names the tools document are listed;
// any other flag is named as written.
var shortFlagNames = map[string]map[string]string{
	"git checkout":      {"b": "new_branch", "B": "new_branch"},
	"git switch":        {"c": "new_branch", "C": "new_branch"},
	"git commit":        {"m": "message", "a": "all", "F": "file", "s": "signoff"},
	"git tag":           {"a": "annotate", "m": "message", "s": "sign", "F": "file"},
	"git merge":         {"m": "message"},
	"gh pr create":      {"t": "title", "b": "body", "B": "base", "H": "head", "d": "draft", "l": "label", "r": "reviewer", "a": "assignee", "f": "fill"},
	"gh pr merge":       {"s": "squash", "m": "merge", "r": "rebase", "d": "delete-branch"},
	"gh pr comment":     {"b": "body"},
	"gh issue create":   {"t": "title", "b": "body", "l": "label", "a": "assignee"},
	"gh issue comment":  {"b": "body"},
	"gh release create": {"t": "title", "n": "notes", "d": "draft", "p": "prerelease"},
}

// operandNames names, per head, the operands (the words that are neither
// the head nor flags nor flag values) in order; the rest are one list
// parameter, args (paths for a head in pathOperands). A name of the form
// "a@b" splits the operand at its last "@" (not a leading one) into
// parameters a and b, and "a==b" at "=="; a trailing "..." makes the last
// name variadic: its operands are one list named after it (packages,
// modules), except that a single one is split as the name says (go get
// M@V is module and version).
var operandNames = map[string][]string{
	"go get":           {"module@version..."},
	"go install":       {"module@version..."},
	"go mod init":      {"module"},
	"go mod download":  {"module@version..."},
	"git checkout":     {"branch"},
	"git switch":       {"branch"},
	"git merge":        {"branch"},
	"git rebase":       {"upstream", "branch"},
	"git tag":          {"tag", "commit"},
	"git push":         {"remote", "branch"},
	"git pull":         {"remote", "branch"},
	"git fetch":        {"remote"},
	"git clone":        {"repository", "directory"},
	"git remote add":   {"name", "url"},
	"git cherry-pick":  {"commit..."},
	"git revert":       {"commit"},
	"git branch":       {"branch"},
	"git worktree add": {"path", "commit"},
	"gh pr view":       {"number"}, "gh pr checkout": {"number"}, "gh pr merge": {"number"},
	"gh pr close": {"number"}, "gh pr comment": {"number"}, "gh pr diff": {"number"},
	"gh pr checks": {"number"}, "gh pr review": {"number"}, "gh pr edit": {"number"},
	"gh pr reopen": {"number"}, "gh pr ready": {"number"},
	"gh issue view": {"number"}, "gh issue close": {"number"}, "gh issue comment": {"number"},
	"gh issue edit": {"number"}, "gh issue reopen": {"number"}, "gh issue develop": {"number"},
	"gh release create": {"tag"}, "gh release view": {"tag"}, "gh release upload": {"tag"},
	"gh release delete": {"tag"}, "gh repo clone": {"repository", "directory"},
	"gh repo view": {"repository"}, "gh run view": {"run_id"}, "gh run watch": {"run_id"},
	"gh run rerun": {"run_id"}, "gh workflow run": {"workflow"}, "gh workflow view": {"workflow"},
	"npm install": {"package@version..."}, "npm i": {"package@version..."}, "npm add": {"package@version..."},
	"npm uninstall": {"package..."}, "pnpm add": {"package@version..."}, "pnpm install": {"package@version..."},
	"pnpm remove": {"package..."}, "yarn add": {"package@version..."}, "yarn remove": {"package..."},
	"bun add": {"package@version..."}, "cargo add": {"crate@version..."}, "cargo install": {"crate..."},
	"pip install": {"package==version..."}, "pip3 install": {"package==version..."},
	"uv add": {"package==version..."}, "uv pip install": {"package==version..."},
	"poetry add":  {"package@version..."},
	"make":        {"target..."},
	"docker pull": {"image"}, "docker push": {"image"}, "docker run": {"image"}, "docker build": {"context"},
	"docker tag": {"source", "target"}, "kubectl get": {"resource", "name"},
	"kubectl describe": {"resource", "name"}, "kubectl delete": {"resource", "name"},
	"kubectl logs": {"pod"}, "kubectl rollout status": {"resource"}, "kubectl rollout restart": {"resource"},
	"helm install": {"release", "chart"}, "helm upgrade": {"release", "chart"},
	"cd": {"dir"},
}

// pathOperands are the programs and heads whose operands are files or
// directories: their list parameter is paths, not args.
var pathOperands = wordSet(`git:add git:commit git:rm git:mv git:restore git:checkout-index git:clean rm rmdir mkdir touch cp mv
	ln unlink cat ls head tail wc stat file du less more diff cmp realpath readlink tree shred trash
	gofmt goimports black ruff:format prettier eslint`)

// selectorFlags are, per head, flags that say which files a command whose
// operands are files works on, in place of naming them: "git add -A" and
// "git add a.go b.go" both stage the change, one all of it. Such a flag is
// kept as an item of the paths list, so that both are git add with the one
// key paths and line up as one step, and a run given ["-A"] or a list of
// files runs either form.
var selectorFlags = map[string]map[string]bool{
	"git add": {"-A": true, "--all": true, "-u": true, "--update": true},
}

// SelectsOperands reports whether word, an item of the operand list of
// the command whose argv template is tmpl, is a flag that selects the
// command's operands (git add -A), which mining keeps among them. Such
// an item may stand where a run refuses anything else that starts with
// "-": it chooses which files the command works on, as the files it
// stands for would, and gives a caller no option it could not get by
// naming them. The head is read from tmpl's literal words before its
// first placeholder.
func SelectsOperands(tmpl []string, word string) bool {
	var prefix []string
	for _, el := range tmpl {
		if strings.ContainsAny(el, "{}") {
			break
		}
		prefix = append(prefix, el)
	}
	if len(prefix) == 0 {
		return false
	}
	return selectorFlags[Default().parseArgv(prefix).head][word]
}

// wrappers are programs that run the command that follows them, with
// how many words of their own precede it: "timeout 60 go test" is
// "go test" run with a limit. Their words stay in the argv template, the
// head is the wrapped command's. A wrapper given flags of its own
// (xargs -n1, command -v) is not unwrapped: it is its own head.
var wrappers = map[string]int{"timeout": 1, "nohup": 0, "command": 0, "exec": 0, "nice": 0, "time": 0, "env": 0, "sudo": 0, "xargs": 0}

// shellWrappers are the shells whose "-c SCRIPT" runs a script: the
// script is what the call does.
var shellWrappers = wordSet(`bash sh zsh dash ksh`)

// credentialWords mark an environment variable whose value is a secret:
// its name is kept, its value is not. See credential.
var credentialWords = wordSet(`TOKEN TOKENS SECRET SECRETS PASSWORD PASSWD PASS KEY KEYS APIKEY AUTH
	CREDENTIAL CREDENTIALS PRIVATE SESSION COOKIE PAT`)

var credentialSuffixes = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY"}

// wordSet splits a list written in the table; ":" inside an entry stands
// for the space of a multi-word head, since the list itself is split on
// spaces. A lone ":" is the shell's no-op command.
func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		if w != ":" {
			w = strings.ReplaceAll(w, ":", " ")
		}
		m[w] = true
	}
	return m
}

// Gemini CLI's built-in tools, listed apart from the tables above so that
// each agent's vocabulary reads as its documentation does; init joins
// them to those tables. run_shell_command runs its "command" argument in
// a shell; write_file (file_path, content), replace (file_path,
// old_string, new_string) and hashline_edit write files, with the same
// argument names as Claude Code's Write and Edit; the others read files
// (grep_search was search_file_content), search and fetch the web, plan,
// load skills and docs, investigate the code base, or keep the agent's
// own notes and tasks, and change nothing in the work.
var (
	geminiShellTools   = wordSet(`run_shell_command`)
	geminiFileTools    = wordSet(`write_file replace hashline_edit`)
	geminiObservations = wordSet(`read_file read_many_files list_directory glob search_file_content grep_search
		google_web_search web_fetch save_memory write_todos get_internal_docs activate_skill cli_help
		codebase_investigator enter_plan_mode exit_plan_mode update_topic tracker_create_task
		tracker_update_task tracker_get_task tracker_list_tasks tracker_add_dependency tracker_visualize`)
)

// init joins each agent's own tool names to the tables; the tables are
// never changed after it.
func init() {
	for _, add := range [...]struct{ to, from map[string]bool }{
		{shellTools, geminiShellTools},
		{fileTools, geminiFileTools},
		{observations, geminiObservations},
	} {
		for name := range add.from {
			add.to[name] = true
		}
	}
}

// stdinTextFlags gives, per head, the flags that read a file whose name
// may be "-", standard input, for text the command also takes inline,
// and the flag that takes it inline. See Rules.stdinText.
var stdinTextFlags = map[string]struct {
	file   []string
	inline string
}{
	"git commit":        {[]string{"-F", "--file"}, "-m"},
	"git tag":           {[]string{"-F", "--file"}, "-m"},
	"gh pr create":      {[]string{"-F", "--body-file"}, "--body"},
	"gh pr edit":        {[]string{"-F", "--body-file"}, "--body"},
	"gh pr comment":     {[]string{"-F", "--body-file"}, "--body"},
	"gh issue create":   {[]string{"-F", "--body-file"}, "--body"},
	"gh issue edit":     {[]string{"-F", "--body-file"}, "--body"},
	"gh issue comment":  {[]string{"-F", "--body-file"}, "--body"},
	"gh release create": {[]string{"-F", "--notes-file"}, "--notes"},
}
