package kubernetes

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pin-tool/pin/internal/host"
)

// DefaultTimeout bounds each request to the API server when Host.Timeout
// is zero.
const DefaultTimeout = 30 * time.Second

// PageSize is how many objects one list request asks for.
const PageSize = 500

// Host is one namespace of a Kubernetes cluster.
type Host struct {
	// Name is the host's name in the catalogue; errors and the snapshot
	// carry it.
	Name string
	// Kubeconfig is the path of a kubeconfig file; "~/" is the home
	// folder. Empty means KUBECONFIG, else ~/.kube/config, else the
	// in-cluster config.
	Kubeconfig string
	// Context is the kubeconfig context; empty means its current context.
	Context string
	// Namespace is the namespace read; empty means the context's, else
	// "default".
	Namespace string
	// Selector, when set, is a label selector that limits the pods read.
	Selector string
	// Timeout bounds each request; zero means DefaultTimeout.
	Timeout time.Duration
	// StartTimes fills each container's StartedAt, RestartCount and
	// Health from the kubelet's report (the container state's startedAt,
	// its restartCount, its last termination, the pod's Ready
	// condition), as docker.Host.StartTimes does from the engine: the
	// pod list already carries them, so they cost nothing, but a
	// snapshot holds them only when asked (pin promote, pin status, pin
	// observe), and other snapshots stay as they were.
	StartTimes bool

	// wrap, when set, wraps the HTTP transport: tests count requests.
	wrap func(http.RoundTripper) http.RoundTripper
	// reuse, when set (Reusing), keeps the client between reads.
	reuse *clientCache
}

// clientCache is one client, built on first use and kept.
type clientCache struct {
	mu  sync.Mutex
	cfg *rest.Config
	ns  string
	cs  *apiClient
}

// Reusing returns h with its client kept between reads: the kubeconfig is
// read and the connection to the API server set up once, not per Observe.
// A long-running command (pin admit) reads its hosts on every request.
// Copies of the result share the client.
func Reusing(h Host) Host {
	h.reuse = &clientCache{}
	return h
}

// client returns the client config, namespace and client set: the kept
// ones when h reuses them, else new ones.
func (h Host) client() (*rest.Config, string, *apiClient, error) {
	if h.reuse != nil {
		h.reuse.mu.Lock()
		defer h.reuse.mu.Unlock()
		if h.reuse.cs != nil {
			return h.reuse.cfg, h.reuse.ns, h.reuse.cs, nil
		}
	}
	cfg, ns, err := h.config()
	if err != nil {
		return nil, "", nil, err
	}
	cs, err := newAPIClient(cfg)
	if err != nil {
		return cfg, ns, nil, err
	}
	if h.reuse != nil {
		h.reuse.cfg, h.reuse.ns, h.reuse.cs = cfg, ns, cs
	}
	return cfg, ns, cs, nil
}

// Observe lists the namespace's pods, the owners that name their workload
// (ReplicaSets when some pod is owned by one, Jobs when some pod is owned
// by one), and its Deployments and StatefulSets (for those scaled to
// zero), and returns their containers and images.
func (h Host) Observe(ctx context.Context) (*host.Snapshot, error) {
	cfg, ns, cs, err := h.client()
	if cfg == nil {
		return nil, host.Errorf(h.Name, "host %s (%s): configuring the client: %w", h.Name, h.describe(), err)
	}
	fail := func(what string, err error) error {
		return host.Errorf(h.Name, "host %s (%s, namespace %s): %s: %w", h.Name, cfg.Host, ns, what, forbidden(err))
	}
	if err != nil {
		return nil, fail("configuring the client", err)
	}
	sel, err := labels.Parse(h.Selector)
	if err != nil {
		return nil, host.Errorf(h.Name, "host %s: selector %q: %w", h.Name, h.Selector, err)
	}
	r := reader{cs: cs, ns: ns, timeout: cmp.Or(h.Timeout, DefaultTimeout)}

	var pods []corev1.Pod
	err = r.list(ctx, metav1.ListOptions{LabelSelector: h.Selector}, func(ctx context.Context, o metav1.ListOptions) (string, error) {
		l, err := listPage[corev1.PodList](ctx, cs.core, ns, "pods", o)
		if err != nil {
			return "", err
		}
		pods = append(pods, l.Items...)
		return l.Continue, nil
	})
	if err != nil {
		return nil, fail("listing pods", err)
	}
	owners, err := r.owners(ctx, pods)
	if err != nil {
		return nil, fail("listing the owners of pods", err)
	}
	idle, err := r.scaledToZero(ctx, sel)
	if err != nil {
		return nil, fail("listing workloads", err)
	}
	return snapshot(h.Name, pods, owners, idle, h.StartTimes), nil
}

// snapshot turns pods into a host.Snapshot; owners maps a pod's controller
// to the workload it belongs to (see owners.workload), and idle are the
// workloads scaled to zero, read from their templates.
func snapshot(hostName string, pods []corev1.Pod, owners owners, idle []idleWorkload, startTimes bool) *host.Snapshot {
	snap := &host.Snapshot{Schema: host.SnapshotSchema, Host: hostName, Containers: []host.Container{}, Images: []host.Image{}}
	images := map[string]*host.Image{}
	seenRepoDigest := map[string]bool{}
	seenWorkload := map[string]bool{}
	for i := range pods {
		p := &pods[i]
		workload := owners.workload(p)
		seenWorkload[workload] = true
		add := func(st corev1.ContainerStatus, prefix string) {
			repo, digest := splitImageID(st.ImageID)
			if digest == "" {
				return // not pulled yet: nothing runs, nothing is known
			}
			snap.Containers = append(snap.Containers, host.Container{
				ID:       p.Name + "/" + st.Name,
				Name:     st.Name,
				Image:    st.Image,
				ImageID:  digest,
				State:    prefix + state(p, st),
				Labels:   p.Labels,
				Workload: workload,
				Pod:      p.Name,
			})
			if startTimes {
				c := &snap.Containers[len(snap.Containers)-1]
				c.StartedAt, c.RestartCount = startedAt(st), int(st.RestartCount)
				c.Health = health(p, st)
			}
			img := images[digest]
			if img == nil {
				img = &host.Image{ID: digest}
				images[digest] = img
			}
			if rd := repo + "@" + digest; repo != "" && !seenRepoDigest[rd] {
				seenRepoDigest[rd] = true
				img.RepoDigests = append(img.RepoDigests, rd)
			}
		}
		for _, st := range p.Status.InitContainerStatuses {
			add(st, "")
		}
		for _, st := range p.Status.ContainerStatuses {
			add(st, "")
		}
		for _, st := range p.Status.EphemeralContainerStatuses {
			add(st, host.EphemeralPrefix)
		}
	}
	for _, t := range idle {
		if seenWorkload[t.workload] {
			continue // its last pods are still there: they say what ran
		}
		for _, c := range slices.Concat(t.spec.Spec.InitContainers, t.spec.Spec.Containers) {
			// Nothing was pulled, so no image ID is known: a snapshot
			// needs one, and the template's reference stands in for it
			// (package observe does not take it for an ID).
			snap.Containers = append(snap.Containers, host.Container{
				ID:       t.workload + "/" + c.Name,
				Name:     c.Name,
				Image:    c.Image,
				ImageID:  c.Image,
				State:    host.StateScaledToZero,
				Labels:   t.spec.Labels,
				Workload: t.workload,
			})
		}
	}
	for _, img := range images {
		snap.Images = append(snap.Images, *img)
	}
	snap.Normalise()
	return snap
}

// splitImageID reads a container status's imageID: "repo@sha256:…", or a
// bare "sha256:…" (an image the runtime knows no repository digest of),
// either possibly prefixed by docker-pullable:// or docker://. It returns
// the repository ("" for a bare digest) and the digest, or "" when the
// imageID names no digest.
func splitImageID(s string) (repo, digest string) {
	s = strings.TrimPrefix(s, "docker-pullable://")
	s = strings.TrimPrefix(s, "docker://")
	if i := strings.LastIndex(s, "@"); i >= 0 {
		repo, s = s[:i], s[i+1:]
	}
	alg, hex, ok := strings.Cut(s, ":")
	if !ok || alg == "" || hex == "" {
		return "", ""
	}
	return repo, s
}

// state is the container's state word: "running" when the kubelet says it
// runs and the pod is Running, else the kubelet's reason.
// startedAt is when the kubelet last started the container, in UTC: a
// running container's start, or a terminated one's; zero for one waiting
// (never started, or between two runs: its last start is not reported).
func startedAt(st corev1.ContainerStatus) time.Time {
	switch {
	case st.State.Running != nil:
		return st.State.Running.StartedAt.UTC()
	case st.State.Terminated != nil:
		return st.State.Terminated.StartedAt.UTC()
	}
	return time.Time{}
}

// health is what the kubelet reports of a container's health: its pod's
// Ready condition and when it last changed, and, for a container whose
// run ended (terminated, or waiting to run again after one:
// CrashLoopBackOff), that run's exit code and end.
func health(p *corev1.Pod, st corev1.ContainerStatus) host.Health {
	var h host.Health
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready := c.Status == corev1.ConditionTrue
			h.Ready, h.Since = &ready, c.LastTransitionTime.UTC()
			if c.LastTransitionTime.IsZero() {
				h.Since = time.Time{}
			}
		}
	}
	if h.Ready == nil {
		// The kubelet has not reported the condition: not Ready.
		ready := false
		h.Ready = &ready
	}
	switch t := cmp.Or(st.State.Terminated, st.LastTerminationState.Terminated); {
	case st.State.Running != nil || t == nil:
	default:
		h.ExitCode = int(t.ExitCode)
		if !t.FinishedAt.IsZero() {
			h.FinishedAt = t.FinishedAt.UTC()
		}
	}
	return h
}

func state(p *corev1.Pod, st corev1.ContainerStatus) string {
	with := func(word, reason string) string {
		if reason == "" {
			return word
		}
		return word + ": " + reason
	}
	switch {
	case st.State.Running != nil && p.Status.Phase == corev1.PodRunning:
		return "running"
	case st.State.Running != nil:
		return with("running", "pod "+cmp.Or(string(p.Status.Phase), "without a phase"))
	case st.State.Waiting != nil:
		return with("waiting", st.State.Waiting.Reason)
	case st.State.Terminated != nil:
		return with("terminated", st.State.Terminated.Reason)
	}
	return "unknown"
}

// config loads the client config and namespace as kubectl does.
func (h Host) config() (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if h.Kubeconfig != "" {
		p, err := expandHome(h.Kubeconfig)
		if err != nil {
			return nil, "", err
		}
		rules.ExplicitPath = p
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: h.Context}
	overrides.Context.Namespace = h.Namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("finding the namespace: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "pin"
	// Protobuf is several times smaller and faster to decode than JSON for
	// thousands of pods; every API server since 1.3 speaks it.
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	// No client-side throttling (a negative QPS): a read is a handful of
	// list requests, and a kept client (Reusing) would otherwise hold a
	// busy webhook to client-go's default of 5 requests a second across
	// reads. The API server's priority and fairness limits what it must.
	cfg.QPS = -1
	if h.wrap != nil {
		cfg.Wrap(h.wrap)
	}
	return cfg, ns, nil
}

// describe names the cluster for errors raised before a client exists.
func (h Host) describe() string {
	var parts []string
	if h.Kubeconfig != "" {
		parts = append(parts, "kubeconfig "+h.Kubeconfig)
	}
	if h.Context != "" {
		parts = append(parts, "context "+h.Context)
	}
	if len(parts) == 0 {
		return "kubectl's current context"
	}
	return strings.Join(parts, ", ")
}

func expandHome(p string) (string, error) {
	tail, ok := strings.CutPrefix(p, "~/")
	if !ok {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expanding %s: %w", p, err)
	}
	return filepath.Join(home, tail), nil
}
