package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/authz"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/host/docker"
)

// The catalogue's Docker host adapter reads the Engine's image store for
// pin authz.
var _ authz.Engine = docker.Host{}

type authzOptions struct {
	*globalOptions
	Socket   string
	Host     string
	FailOpen bool
	Decision time.Duration
}

func newAuthzCmd(g *globalOptions, s streams) *cobra.Command {
	o := &authzOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "authz --host HOST",
		Short: "Serve a Docker Engine authorization plugin that refuses downgrades",
		Long: `authz serves the Docker Engine's authorization plugin protocol on a unix
socket. It judges every call that puts an image under a name a module covers:
containers/create (the same name, a pin.module label, or Compose's project
and service labels), containers/{id}/rename (a container renamed into a
module's name is judged as created under it), and swarm services/create and
services/{id}/update (a pin.module label on the tasks' containers). The image
is judged as the Engine holds it (image IDs included) against what the module
runs on HOST and what the lock names; older, or an order that cannot be
decided, is denied unless the container is labelled
pin.dev/allow-downgrade="<why>" (and pin.dev/restore for a one_way module).
A create whose body the Engine does not pass to plugins (not JSON, or 1 MiB
or more) is denied, with or without --fail-open. Everything else is allowed.
Decisions are logged to stderr, one JSON line each.

HOST is the catalogue host this Engine is. Start authz before dockerd, and
name it there: dockerd --authorization-plugin=pin (the socket's base name,
found in /run/docker/plugins). Stop dockerd before authz: while the plugin is
down, the Engine fails every request.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAuthz(cmd.Context(), o, s) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Socket, "socket", "/run/docker/plugins/pin.sock", "unix socket to serve on; dockerd finds /run/docker/plugins/NAME.sock by NAME")
	f.StringVar(&o.Host, "host", "", "the catalogue host this Engine is")
	f.BoolVar(&o.FailOpen, "fail-open", false, "allow what pin cannot decide because an Engine or registry read fails or the time is spent (default: deny it); never what a request hides")
	f.DurationVar(&o.Decision, "decision-timeout", authz.DefaultTimeout, "time limit of one decision")
	return cmd
}

func runAuthz(ctx context.Context, o *authzOptions, s streams) error {
	if err := textOnly(o.globalOptions, "authz", "read its decisions on stderr, one JSON line each, as it logs them always"); err != nil {
		return err
	}
	if o.Host == "" {
		return withCode(exitInput, errors.New("authz needs --host HOST: the catalogue host this Engine is"))
	}
	if o.Decision <= 0 {
		return withCode(exitInput, fmt.Errorf("--decision-timeout %s: write a positive duration", o.Decision))
	}
	e, _, err := enforce.Load(o.Catalogue, o.Lock, o.sourceOptions())
	if err != nil {
		return loadError(s, nil, nil, err)
	}
	h := e.Catalogue.Host(o.Host)
	switch {
	case h == nil:
		return withCode(exitInput, fmt.Errorf("--host %s: not in the catalogue", o.Host))
	case h.Kubernetes != nil || h.Snapshot != "":
		return withCode(exitInput, fmt.Errorf("--host %s: not a Docker Engine read live (it is a Kubernetes host or a snapshot)", o.Host))
	}
	// A socket left by a previous run that stopped without removing it.
	if fi, err := os.Lstat(o.Socket); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(o.Socket)
	}
	ln, err := net.Listen("unix", o.Socket)
	if err != nil {
		return withCode(exitInput, fmt.Errorf("--socket %s: %w", o.Socket, err))
	}
	engine, ok := e.Hosts[o.Host].(authz.Engine)
	if !ok {
		return withCode(exitInput, fmt.Errorf("--host %s: not a Docker Engine read live", o.Host))
	}
	// The host is judged by its own environment's lock.
	srv := &authz.Server{Enforcer: e.For(o.Host), Host: o.Host, Engine: engine, FailOpen: o.FailOpen, Timeout: o.Decision, Log: slog.New(slog.NewJSONHandler(s.Err, nil))}
	mode := "closed"
	if o.FailOpen {
		mode = "open"
	}
	fmt.Fprintf(s.Err, "pin authz: serving unix://%s for host %s; fails %s\n", o.Socket, o.Host, mode)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	return serveUntilDone(ctx, hs, func() error { return hs.Serve(ln) })
}
