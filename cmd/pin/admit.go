package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/admit"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/host/kubernetes"
)

// The catalogue's Kubernetes host adapter reads the owners of pods and
// jobs for pin admit.
var _ admit.Owners = kubernetes.Host{}

type admitOptions struct {
	*globalOptions
	Listen         string
	CertFile       string
	KeyFile        string
	Hosts          []string
	FailurePolicy  string
	WebhookTimeout time.Duration
}

func newAdmitCmd(g *globalOptions, s streams) *cobra.Command {
	o := &admitOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "admit --tls-cert FILE --tls-key FILE",
		Short: "Serve a Kubernetes validating admission webhook that refuses downgrades",
		Long: `admit serves a validating admission webhook (admission.k8s.io/v1) over TLS.
For the CREATE and UPDATE of Pods (and their ephemeral containers),
Deployments, StatefulSets, DaemonSets, Jobs and CronJobs in the namespaces of
the catalogue's Kubernetes hosts (--host, or all of them), it holds each
changed container image against what the module that takes the workload over
runs now and what the lock names, and denies a downgrade or an unknown order
with pin's refusal, unless the object, or the workload it belongs to, is
annotated pin.dev/allow-downgrade: "<why>" (and pin.dev/restore for a one_way
module; pin.dev/allow-ephemeral on the Pod for kubectl debug). A module covers
what the new or the old object names, and the Pods and Jobs its Deployment or
CronJob owns (read from the API server). Decisions are logged to stderr, one
JSON line each.

--failure-policy must match the ValidatingWebhookConfiguration's: it is what
admit answers when it cannot decide within the request's timeout, and the
answer says so. See examples/kubernetes/admission.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAdmit(cmd.Context(), o, s) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Listen, "listen", ":8443", "address to serve HTTPS on")
	f.StringVar(&o.CertFile, "tls-cert", "", "PEM certificate of the webhook (read again when it changes)")
	f.StringVar(&o.KeyFile, "tls-key", "", "PEM key of the webhook")
	f.StringSliceVar(&o.Hosts, "host", nil, "catalogue Kubernetes hosts whose namespaces are guarded (default: all)")
	f.StringVar(&o.FailurePolicy, "failure-policy", "Fail", "answer when pin cannot decide: Fail (deny) or Ignore (allow with a warning)")
	f.DurationVar(&o.WebhookTimeout, "webhook-timeout", admit.DefaultTimeout, "the webhook's timeoutSeconds, when a request does not say it")
	return cmd
}

func runAdmit(ctx context.Context, o *admitOptions, s streams) error {
	if err := textOnly(o.globalOptions, "admit", "read its decisions on stderr, one JSON line each, as it logs them always"); err != nil {
		return err
	}
	if o.CertFile == "" || o.KeyFile == "" {
		return withCode(exitInput, errors.New("admit needs --tls-cert and --tls-key: the API server calls webhooks over HTTPS only"))
	}
	policy := admit.FailurePolicy(o.FailurePolicy)
	if policy != admit.Fail && policy != admit.Ignore {
		return withCode(exitInput, fmt.Errorf("--failure-policy %q: write Fail or Ignore, as the ValidatingWebhookConfiguration says", o.FailurePolicy))
	}
	if o.WebhookTimeout <= 0 || o.WebhookTimeout > 30*time.Second {
		return withCode(exitInput, fmt.Errorf("--webhook-timeout %s: the API server allows 1s to 30s", o.WebhookTimeout))
	}
	certs := &admit.Certificates{CertFile: o.CertFile, KeyFile: o.KeyFile}
	if err := certs.Load(); err != nil {
		return withCode(exitInput, err)
	}
	e, _, err := enforce.Load(o.Catalogue, o.Lock, o.sourceOptions())
	if err != nil {
		return loadError(s, nil, nil, err)
	}
	namespaces := map[string]string{}
	for _, h := range e.Catalogue.Hosts {
		if len(o.Hosts) > 0 && !slices.Contains(o.Hosts, h.Name) {
			continue
		}
		if h.Kubernetes == nil {
			if len(o.Hosts) > 0 {
				return withCode(exitInput, fmt.Errorf("--host %s: not a Kubernetes host of the catalogue", h.Name))
			}
			continue
		}
		if h.Kubernetes.Namespace == "" {
			return withCode(exitInput, fmt.Errorf("host %s: admit guards namespaces by name: write namespace = \"…\" in its kubernetes block", h.Name))
		}
		if other, ok := namespaces[h.Kubernetes.Namespace]; ok {
			return withCode(exitInput, fmt.Errorf("hosts %s and %s both read namespace %s: give admit one of them with --host", other, h.Name, h.Kubernetes.Namespace))
		}
		namespaces[h.Kubernetes.Namespace] = h.Name
	}
	for _, h := range o.Hosts {
		if e.Catalogue.Host(h) == nil {
			return withCode(exitInput, fmt.Errorf("--host %s: not in the catalogue", h))
		}
	}
	if len(namespaces) == 0 {
		return withCode(exitInput, errors.New("the catalogue has no Kubernetes host for admit to guard"))
	}
	owners := map[string]admit.Owners{}
	for _, h := range namespaces {
		if r, ok := e.Hosts[h].(admit.Owners); ok {
			owners[h] = r
		}
	}
	srv := &admit.Server{Enforcer: e, Namespaces: namespaces, Owners: owners, FailurePolicy: policy, Timeout: o.WebhookTimeout,
		Log: slog.New(slog.NewJSONHandler(s.Err, nil))}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return withCode(exitInput, fmt.Errorf("--listen %s: %w", o.Listen, err))
	}
	var guarded []string
	for ns, h := range namespaces {
		guarded = append(guarded, ns+" (host "+h+")")
	}
	slices.Sort(guarded)
	fmt.Fprintf(s.Err, "pin admit: serving https://%s/validate for namespaces %s; failurePolicy %s\n", ln.Addr(), strings.Join(guarded, ", "), policy)
	hs := &http.Server{Handler: srv, TLSConfig: certs.TLSConfig(), ReadHeaderTimeout: 10 * time.Second}
	return serveUntilDone(ctx, hs, func() error { return hs.ServeTLS(ln, "", "") })
}

// serveUntilDone serves until ctx ends (SIGINT, SIGTERM), then lets the
// requests in flight finish for up to 10 seconds.
func serveUntilDone(ctx context.Context, hs *http.Server, serve func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case err := <-errc:
		return withCode(exitSource, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return withCode(exitSource, err)
	}
	return nil
}
