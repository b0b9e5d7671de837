package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/lock"
)

// Exit codes, as docs/reference.md documents them ("Exit codes").
const (
	exitOK       = 0
	exitFindings = 1
	exitInput    = 2
	exitSource   = 3
)

// streams are the writers a command may use; nothing else is printed to.
type streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// globalOptions are the flags every command takes.
type globalOptions struct {
	Catalogue string
	Lock      string
	Format    string
	Offline   bool
	CacheDir  string
	// CertsDir replaces /etc/docker/certs.d as the root of the
	// registries' certificate folders (--certs-dir, else PIN_CERTS_DIR).
	CertsDir    string
	Concurrency int
	// HostConcurrency and HostTimeout bound the reading of hosts: how
	// many at once, and how long each.
	HostConcurrency int
	HostTimeout     time.Duration
	Verbose         bool
	// Timeout bounds each request to a host or registry.
	Timeout time.Duration
	// now is the clock; tests may set it.
	now func() time.Time
}

// envCertsDir names the folder --certs-dir names when the flag is not given.
const envCertsDir = "PIN_CERTS_DIR"

// certsDir settles --certs-dir: the flag, else $PIN_CERTS_DIR, else ""
// (the registry's default). A folder named that is not one is bad input:
// certs.d's own host folders may be missing, its root may not.
func (g *globalOptions) certsDir(cmd *cobra.Command) error {
	from := "--certs-dir"
	if !cmd.Flags().Changed("certs-dir") {
		g.CertsDir, from = os.Getenv(envCertsDir), envCertsDir
	}
	if g.CertsDir == "" {
		return nil
	}
	fi, err := os.Stat(g.CertsDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = errors.New("no such folder")
	case err == nil && !fi.IsDir():
		err = errors.New("not a folder")
	}
	if err != nil {
		return withCode(exitInput, fmt.Errorf("%s %s: %w; name a folder of <host:port>/ca.crt, client.cert and client.key", from, g.CertsDir, err))
	}
	return nil
}

// exitError carries an exit code with the error that caused it.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// errReported means the command already printed what went wrong.
var errReported = errors.New("reported")

func newRootCmd(s streams, now func() time.Time) *cobra.Command {
	g := &globalOptions{now: now}
	root := &cobra.Command{
		Use:   "pin",
		Short: "Pin container images without ever downgrading what runs",
		Long: `pin reads a catalogue of modules (catalogue.hcl), what hosts run and what
registries offer, and writes pin.lock.hcl: for every module, the exact image
to run and why. A lock written by pin never names an image older than what
already runs, unless the catalogue states the downgrade and its reason.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetIn(s.In)
	f := root.PersistentFlags()
	f.StringVar(&g.Catalogue, "catalogue", catalogue.DefaultPath, "catalogue file, or folder of *.hcl files")
	f.StringVar(&g.Lock, "lock", lock.DefaultPath, "lockfile")
	f.StringVar(&g.Format, "format", "table", "output format: table or json")
	f.BoolVar(&g.Offline, "offline", false, "use only the lock, snapshots, layout mirrors and the cache; contact no host or registry")
	f.StringVar(&g.CacheDir, "cache-dir", "", "cache of immutable registry content (default: the user cache folder)")
	f.StringVar(&g.CertsDir, "certs-dir", "", "registries' certificates, <dir>/<host:port>/{ca.crt,client.cert,client.key} (default: $"+envCertsDir+", else "+registry.DefaultCertsDir+")")
	f.IntVar(&g.Concurrency, "concurrency", 8, "requests in flight per registry")
	f.BoolVarP(&g.Verbose, "verbose", "v", false, "say more: sources asked, requests made")
	f.DurationVar(&g.Timeout, "timeout", 30*time.Second, "time limit of each request to a host or registry")
	f.IntVar(&g.HostConcurrency, "host-concurrency", 8, "hosts read at once")
	f.DurationVar(&g.HostTimeout, "host-timeout", 2*time.Minute, "time limit of the read of each host, all its requests together")
	root.SetFlagErrorFunc(flagErrorFunc)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if g.Format != "table" && g.Format != "json" {
			return withCode(exitInput, fmt.Errorf("--format %q: write table or json", g.Format))
		}
		if cmd.Name() == "completion" || cmd.HasParent() && cmd.Parent().Name() == "completion" {
			return textOnly(g, "completion", "source the script it prints in your shell")
		}
		if g.Timeout <= 0 {
			return withCode(exitInput, fmt.Errorf("--timeout %s: write a positive duration, such as 30s", g.Timeout))
		}
		if g.Concurrency < 1 {
			return withCode(exitInput, fmt.Errorf("--concurrency %d: write a number of at least 1", g.Concurrency))
		}
		return g.certsDir(cmd)
	}
	root.AddCommand(newResolveCmd(g, s), newLockCmd(g, s), newPlanCmd(g, s), newOutdatedCmd(g, s), newVersionCmd(g, s))
	root.AddCommand(newAdmitCmd(g, s))
	root.AddCommand(newAuthzCmd(g, s))
	root.AddCommand(newVerifyCmd(g, s))
	root.AddCommand(newInitCmd(g, s))
	root.AddCommand(newExportCmd(g, s))
	root.AddCommand(newProposeCmd(g, s))
	root.AddCommand(newObserveCmd(g, s))
	root.AddCommand(newPromoteCmd(g, s), newStatusCmd(g, s))
	setVersion(root)
	return root
}

// run executes the CLI and maps the outcome to an exit code.
func run(ctx context.Context, args []string, s streams) int {
	return runWithClock(ctx, args, s, time.Now)
}

// runWithClock is run with the clock that bounds plausible build dates.
func runWithClock(ctx context.Context, args []string, s streams, now func() time.Time) int {
	root := newRootCmd(s, now)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return exitCode(err, s.Err)
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	code := exitInput // cobra's own errors: unknown command, bad args
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if !errors.Is(err, errReported) {
		msg := err.Error()
		if hint := permissionHint(err); hint != "" {
			msg += "\n  " + hint
		}
		fmt.Fprintf(stderr, "pin: %s\n", sanitize(msg))
	}
	return code
}
