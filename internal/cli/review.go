package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/review"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/store"
)

const reviewDoc = `review serves a local web page for reviewing bundles: one page per
bundle (a BUNDLE directory, or a DIR of bundles such as mine --bundles
writes; default the current directory), and the inbox of decisions and
approvals suspended runs wait for.

A bundle's page shows the procedure as a graph (deterministic steps,
steps that need a model or a person, approval boundaries, data flow),
the alignment matrix of every source and held-out trace against the
steps (matched, missing, extra, divergent, with the first divergence's
JSON path; a cell opens on the redacted action and what was expected),
the parameters with their examples, constants, derived expressions and
their checks, excluded traces, the workflow source with each line linked
to its step or trace, a diff of code and side effects against the last
approved version of the same workflow (among the bundles shown, else the
copy approving keeps in --state-dir/approved, refused if it was changed
since), the dry-run call of each step, grants and secret ids, crystallize
validate's checks, the eval pack's results, savings, confidence and the
promotion status with its reasons.

Approve and Reject record exactly what crystallize approve records,
after validating the bundle again, and need a reason; a blocked, stale
or invalid bundle is refused with the reason shown. The author the
bundle records cannot approve it unless the configuration sets
[approvals] allow_self_approval. An inbox answer resumes the run as
crystallize session inbox answer does.

The server listens on --addr (default 127.0.0.1 on a free port) and
prints its address. Any address off the loopback interface must be given
with --addr and draws a warning: whoever reaches it can approve. Every
form carries a per-server random token; a request under another Host
name is refused (421), a POST from another origin or without the token
too (403); GET changes nothing.

--static OUT.html writes the page of one BUNDLE, without the forms, as
one self-contained file and exits.`

type reviewFlags struct {
	addr, approver, stateDir, db, config, static string
	open                                         bool
}

func newReviewCmd(e *env) *cobra.Command {
	var f reviewFlags
	cmd := &cobra.Command{
		Use:   "review [BUNDLE|DIR]... [--addr 127.0.0.1:0] [--open] [--approver NAME] | --static OUT.html BUNDLE",
		Short: "Review bundles and answer the inbox in a local web page",
		Long:  reviewDoc,
		Example: `  crystallize review bundles/ --approver lead@example.com --open
  crystallize review --static review.html bundles/release`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"."}
			}
			if f.static != "" {
				return reviewStatic(e, f.static, f.stateDir, args)
			}
			return runReview(cmd, e, &f, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.addr, "addr", "127.0.0.1:0", "address to listen on (host:port); off loopback only when given explicitly")
	fs.BoolVar(&f.open, "open", false, "open the page in the default browser")
	fs.StringVar(&f.approver, "approver", "", "who decides (default: the page asks for a name)")
	fs.StringVar(&f.stateDir, "state-dir", runner.DefaultStateDir, "state directory whose approval ledger records decisions and keeps approved versions")
	fs.StringVar(&f.db, "db", store.DefaultPath, "the registry whose inbox the page shows and answers")
	configFlag(fs, &f.config)
	fs.StringVar(&f.static, "static", "", "write the page of one BUNDLE to this file, without forms, and exit")
	return cmd
}

func reviewStatic(e *env, out, stateDir string, args []string) error {
	if len(args) != 1 {
		return usagef("--static writes the page of one bundle; got %d paths", len(args))
	}
	dirs, err := review.Find(args)
	if err != nil {
		return err
	}
	if len(dirs) != 1 {
		return usagef("--static writes the page of one bundle; %s holds %d", args[0], len(dirs))
	}
	p := review.LoadStatic(dirs[0], stateDir)
	if p.Err != "" && p.Manifest == nil {
		return fmt.Errorf("reading bundle %s: %s", dirs[0], p.Err)
	}
	var buf bytes.Buffer
	if err := review.WriteStatic(&buf, p); err != nil {
		return err
	}
	if err := atomicfile.Write(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s (%s, status %s)\n", out, dirs[0], p.Status)
	return nil
}

func runReview(cmd *cobra.Command, e *env, f *reviewFlags, args []string) error {
	dirs, err := review.Find(args)
	if err != nil {
		return err
	}
	cfg, err := projectConfig(f.config)
	if err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(f.addr); err != nil {
		return usagef("--addr %q: want host:port, such as 127.0.0.1:0", f.addr)
	}
	if !review.IsLoopback(f.addr) {
		fmt.Fprintf(e.stderr, "review: warning: %s is not a loopback address; anyone who can reach it can read these bundles and, with the page's token, approve them\n", f.addr)
	}
	if _, err := sourceDate(e.getenv); err != nil {
		return err
	}
	srv, err := review.NewServer(review.Options{
		// Decisions are dated as crystallize approve dates them.
		Now:     func() time.Time { t, _ := sourceDate(e.getenv); return t },
		Bundles: dirs, Approver: f.approver, StateDir: f.stateDir,
		AllowSelfApproval: cfg != nil && cfg.Approvals.AllowSelfApproval,
		Inbox:             &cliInbox{e: e, db: f.db, by: f.approver},
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	hs := &http.Server{Handler: srv.Handler(addr), ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + addr + "/"
	fmt.Fprintf(e.stdout, "review: %d bundle(s) at %s (Ctrl-C to stop)\n", len(dirs), url)
	if f.open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(e.stderr, "review: opening a browser: %v\n", err)
		}
	}
	ctx := cmd.Context()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// openBrowser asks the desktop to open url.
func openBrowser(url string) error {
	name := "xdg-open"
	switch goruntime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		return exec.Command("rundll32", "url.dll,FileProtocolHandler", url).Start()
	}
	return exec.Command(name, url).Start()
}

// cliInbox is the review server's view of the registry's inbox: the
// unanswered items, answered through answerItem, the function session
// inbox answer runs, with the resumed run's output captured for the page.
type cliInbox struct {
	e  *env
	db string
	by string // who answers: --approver, else $USER
}

func (x *cliInbox) Pending(ctx context.Context) ([]store.InboxItem, error) {
	if _, err := os.Stat(x.db); err != nil {
		return nil, nil // no registry yet: nothing waits
	}
	d, err := openIndex(ctx, x.db)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Items(ctx, "", false)
}

func (x *cliInbox) Answer(ctx context.Context, id int64, a registry.Answer) (string, error) {
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out, getenv: x.e.getenv}
	// A command of its own, reading no terminal: a step after the one
	// answered that asks again waits in the inbox, it does not prompt
	// the terminal the server runs in.
	c := &cobra.Command{}
	c.SetContext(ctx)
	c.SetIn(strings.NewReader(""))
	a.By = x.by
	if a.By == "" {
		a.By = person(x.e)
	}
	err := answerItem(c, e, x.db, id, a, false)
	return out.String(), err
}
