package docker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/cli/cli/connhelper"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/client"
	"golang.org/x/sync/errgroup"

	"github.com/pin-tool/pin/internal/host"
)

// DefaultTimeout bounds each call to the engine when Host.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// InspectConcurrency is how many image inspects are in flight at once.
const InspectConcurrency = 4

// Host is a Docker Engine API endpoint.
type Host struct {
	// Name is the host's name in the catalogue; errors and the snapshot
	// carry it.
	Name string
	// Addr is the endpoint: unix:///var/run/docker.sock, tcp://h:2376 or
	// ssh://user@host[/path/to/docker.sock]. Empty means Context, else
	// what the Docker CLI uses without flags: DOCKER_HOST (with
	// DOCKER_CERT_PATH and DOCKER_TLS_VERIFY), else DOCKER_CONTEXT, else
	// the Docker config's current context, else the default socket (see
	// resolve). DOCKER_API_VERSION applies to all.
	Addr string
	// Context names a Docker CLI context (docker context ls), read from
	// the context store in $DOCKER_CONFIG or ~/.docker, with its TLS
	// material. Ignored when Addr is set.
	Context string
	// CertPath is a folder holding ca.pem, cert.pem and key.pem, as
	// DOCKER_CERT_PATH. For a tcp:// endpoint, TLS is on when CertPath is set
	// or TLSVerify is true (then CertPath defaults to $DOCKER_CONFIG or
	// ~/.docker, and files missing from it are left out).
	CertPath string
	// TLSVerify checks the engine's certificate, as DOCKER_TLS_VERIFY. As in
	// the Docker CLI, TLS with a CertPath but without TLSVerify encrypts but
	// does not verify the engine.
	TLSVerify bool
	// Timeout bounds each call to the engine; zero means DefaultTimeout.
	Timeout time.Duration

	// StartTimes reads each container's start, restart count and health
	// (host.Container.StartedAt, RestartCount and Health, from the
	// engine's State.StartedAt, RestartCount, ExitCode, FinishedAt and
	// Health): an inspect per container, at
	// most InspectConcurrency at once with the image inspects, so only
	// the commands that need them ask (pin promote, pin status, pin
	// observe); pin resolve's calls stay what they were.
	StartTimes bool

	// Calls, when set, counts the calls Observe makes to the engine.
	Calls *Calls

	// wrap, when set, wraps the HTTP transport: tests count requests.
	wrap func(http.RoundTripper) http.RoundTripper
}

// Observe lists the host's containers, whatever their state, and inspects
// each distinct image they use. A container whose image is gone is reported
// without it. A container's Labels are its image's labels with its own on
// top, as the engine reports them.
//
// A container's Image is the reference it was created from, as given. The
// engine's list says it only while that reference still names the
// container's image; once it does not (the tag moved to another image, or
// the image was removed) the list gives the image ID instead. For each such
// container, and only those, Observe inspects the container and takes the
// reference from its configuration (Config.Image). A container created
// from an image ID keeps it: its inspect says the same. A container
// removed between the list and its inspect keeps what the list said.
// With StartTimes, every container is inspected, for its start.
func (h Host) Observe(ctx context.Context) (*host.Snapshot, error) {
	timeout := cmp.Or(h.Timeout, DefaultTimeout)
	e, err := h.resolve()
	fail := func(what string, err error) error {
		return host.Errorf(h.Name, "host %s (%s): %s: %w", h.Name, cmp.Or(e.describe(), h.Addr, h.Context), what, e.explain(err))
	}
	if err != nil {
		return nil, fail("configuring the client", err)
	}
	cli, tr, err := h.client(e, timeout)
	if err != nil {
		return nil, fail("configuring the client", err)
	}
	defer tr.CloseIdleConnections()
	defer cli.Close()

	// One round trip first: the ping, which finds a down engine and says
	// which API version it speaks (negotiated here, once, unless
	// DOCKER_API_VERSION fixes it). Then the container list, and the
	// engine's info at once with it only where the ping cannot say the
	// image store (storeSourceOf): two round trips before the inspects,
	// not three, and no wait for /info, the engine's slowest answer,
	// where its age or the inspects say the store.
	h.Calls.add(pingCall)
	ping, err := call(ctx, timeout, cli.Ping)
	switch {
	case err == nil:
		cli.NegotiateAPIVersionPing(ping)
	case client.IsErrConnectionFailed(err) || ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return nil, fail("reading engine info", err)
	default:
		// The engine answered, with an error: its answer to /info says
		// what is wrong in its own words, which a ping's cannot (a HEAD
		// has no body). The client negotiates again there, as Moby's
		// NegotiateAPIVersion leaves it when a ping fails.
	}
	store := storeSourceOf(err == nil, ping.APIVersion, cli.ClientVersion())
	var (
		info             system.Info
		list             []container.Summary
		infoErr, listErr error
		wg               sync.WaitGroup
	)
	if store == storeFromInfo {
		h.Calls.add(infoCall)
		wg.Go(func() { info, infoErr = call(ctx, timeout, cli.Info) })
	}
	h.Calls.add(containerListCall)
	wg.Go(func() {
		list, listErr = call(ctx, timeout, func(ctx context.Context) ([]container.Summary, error) {
			// All: every state, not only running containers.
			return cli.ContainerList(ctx, container.ListOptions{All: true})
		})
	})
	wg.Wait()
	if infoErr != nil { // the info's error first, whatever the list's: one message for one fault
		return nil, fail("reading engine info", infoErr)
	}
	if listErr != nil {
		return nil, fail("listing containers", listErr)
	}
	snap := &host.Snapshot{Schema: host.SnapshotSchema, Host: h.Name, ImageStore: "classic"}
	if store == storeFromInfo {
		snap.ImageStore = storeOfInfo(info)
	}
	ids := map[string]bool{}
	var inspect []int // the containers to inspect: those the list names by image ID, or all
	for _, c := range list {
		if c.ImageID != "" && c.Image == c.ImageID || h.StartTimes {
			inspect = append(inspect, len(snap.Containers))
		}
		snap.Containers = append(snap.Containers, host.Container{
			ID:      c.ID,
			Name:    containerName(c.Names),
			Image:   c.Image,
			ImageID: c.ImageID,
			State:   string(c.State),
			Labels:  c.Labels,
		})
		if c.ImageID != "" {
			ids[c.ImageID] = true
		}
	}

	var (
		mu        sync.Mutex
		inspected []image.InspectResponse // the image inspects, for storeOfImages
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(InspectConcurrency)
	for _, i := range inspect {
		c := &snap.Containers[i] // each goroutine writes its own element
		byID := c.ImageID != "" && c.Image == c.ImageID
		g.Go(func() error {
			h.Calls.add(containerInspectCall)
			resp, err := call(gctx, timeout, func(ctx context.Context) (container.InspectResponse, error) {
				return cli.ContainerInspect(ctx, c.ID)
			})
			if gone(err) {
				return nil // removed since the list: keep what it said
			}
			if err != nil {
				return fail("inspecting container "+c.Name, err)
			}
			if byID && resp.Config != nil && resp.Config.Image != "" {
				c.Image = resp.Config.Image
			}
			if h.StartTimes && resp.ContainerJSONBase != nil {
				c.RestartCount = resp.RestartCount
				if resp.State != nil {
					started, err := host.ParseStartedAt(resp.State.StartedAt)
					if err != nil {
						return fail("inspecting container "+c.Name, err)
					}
					c.StartedAt = started
					// The inspect's state, newer than the list's: the
					// state, start and health of one moment.
					if resp.State.Status != "" {
						c.State = string(resp.State.Status)
					}
					if c.Health, err = engineHealth(resp.State); err != nil {
						return fail("inspecting container "+c.Name, err)
					}
				}
			}
			return nil
		})
	}
	for id := range ids {
		g.Go(func() error {
			h.Calls.add(imageInspectCall)
			resp, err := call(gctx, timeout, func(ctx context.Context) (image.InspectResponse, error) {
				return cli.ImageInspect(ctx, id)
			})
			if cerrdefs.IsNotFound(err) {
				return nil // removed since the container was made
			}
			if err != nil {
				return fail("inspecting image "+id, err)
			}
			img, err := snapshotImage(id, resp)
			if err != nil {
				return fail("reading image "+id, err)
			}
			mu.Lock()
			defer mu.Unlock()
			snap.Images = append(snap.Images, img)
			inspected = append(inspected, resp)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if store == storeFromImages {
		snap.ImageStore = storeOfImages(list, inspected)
	}
	snap.Normalise()
	return snap, nil
}

// gone says whether an Engine's error answers that the container asked
// for no longer exists: dockerd's 404, or Podman's 500 whose cause is
// "no such container" (libpod's ErrNoSuchCtr), which Podman answers when
// the container is removed between its lookup and its inspect.
func gone(err error) bool {
	return cerrdefs.IsNotFound(err) || err != nil && strings.HasSuffix(err.Error(), ": no such container")
}

// engineHealth is what a container's inspected state says of its health.
func engineHealth(st *container.State) (host.Health, error) {
	var check string
	var log []host.Probe
	if st.Health != nil {
		check = string(st.Health.Status)
		for _, p := range st.Health.Log {
			if p != nil {
				log = append(log, host.Probe{Start: p.Start, ExitCode: p.ExitCode})
			}
		}
	}
	return host.EngineHealth(string(st.Status), st.ExitCode, st.FinishedAt, check, log)
}

// Calls counts the calls that Observe makes to the engine, by kind, for
// tests and diagnostics: set Host.Calls to one. Each call is counted when
// it is made, whether it succeeds or not. It is safe for concurrent use and may be
// shared by several Observes, whose calls then add up. The zero value is
// ready.
type Calls struct {
	n [callKinds]atomic.Int64
}

// The kinds of calls that Calls counts.
const (
	pingCall = iota
	infoCall
	containerListCall
	containerInspectCall
	imageInspectCall
	callKinds
)

// CallCounts is what a Calls has counted.
type CallCounts struct {
	Ping             int // HEAD /_ping (GET where HEAD fails): one per Observe, first
	Info             int // GET /info: one per Observe where the ping cannot say the image store (API 1.42 to 1.47, or an engine whose ping failed)
	ContainerList    int // GET /containers/json?all=1: one per Observe
	ContainerInspect int // GET /containers/{id}/json: one per container the list names by image ID; with StartTimes, one per container
	ImageInspect     int // GET /images/{id}/json: one per distinct image ID
}

// Counts returns the counts so far; a nil Calls has counted nothing.
func (c *Calls) Counts() CallCounts {
	if c == nil {
		return CallCounts{}
	}
	return CallCounts{
		Ping:             int(c.n[pingCall].Load()),
		Info:             int(c.n[infoCall].Load()),
		ContainerList:    int(c.n[containerListCall].Load()),
		ContainerInspect: int(c.n[containerInspectCall].Load()),
		ImageInspect:     int(c.n[imageInspectCall].Load()),
	}
}

// add counts one call of the kind; nothing when c is nil.
func (c *Calls) add(kind int) {
	if c != nil {
		c.n[kind].Add(1)
	}
}

// call runs one engine call under its own timeout.
func call[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return f(ctx)
}

// containerName picks the container's own name from the list's names, which
// also hold legacy link aliases ("/app/db"), and strips the leading "/".
func containerName(names []string) string {
	for _, n := range names {
		if n = strings.TrimPrefix(n, "/"); !strings.Contains(n, "/") {
			return n
		}
	}
	if len(names) > 0 {
		return strings.TrimPrefix(names[0], "/")
	}
	return ""
}

// snapshotImage keeps what pin reads of an inspected image. id is the ID
// the containers name, so that the two always match.
func snapshotImage(id string, r image.InspectResponse) (host.Image, error) {
	img := host.Image{
		ID:          id,
		RepoTags:    r.RepoTags,
		RepoDigests: r.RepoDigests,
		OS:          r.Os,
		Arch:        r.Architecture,
		Variant:     r.Variant,
	}
	if r.Config != nil {
		img.Labels = r.Config.Labels
	}
	if r.Created != "" {
		t, err := time.Parse(time.RFC3339Nano, r.Created)
		if err != nil {
			return host.Image{}, fmt.Errorf("created %q: %w", r.Created, err)
		}
		img.Created = t.UTC()
	}
	return img, nil
}

// client makes a Moby client for e over a transport that it owns, so that
// TLS and the test hook apply to it whatever the endpoint.
func (h Host) client(e endpoint, timeout time.Duration) (*client.Client, *http.Transport, error) {
	tr := &http.Transport{}
	opts := []client.Opt{
		client.WithHTTPClient(&http.Client{Transport: tr, CheckRedirect: client.CheckRedirect}),
		client.WithAPIVersionNegotiation(),
		client.WithVersionFromEnv(), // DOCKER_API_VERSION, as the Docker CLI
	}
	helper, err := connhelper.GetConnectionHelperWithSSHOpts(e.addr, sshFlags(timeout))
	if err != nil {
		return nil, nil, err
	}
	switch {
	case helper != nil: // ssh://: "docker system dial-stdio" on the remote host
		tr.DialContext = helper.Dialer
		opts = append(opts, client.WithHost(helper.Host), client.WithDialContext(helper.Dialer))
	case strings.HasPrefix(e.addr, "tcp://") && e.tls != nil:
		tr.TLSClientConfig = e.tls
		opts = append(opts, client.WithHost(e.addr), client.WithScheme("https"))
	default: // unix://, plain tcp://, and whatever else the Moby client accepts or refuses
		opts = append(opts, client.WithHost(e.addr))
	}
	if h.wrap != nil {
		opts = append(opts, client.WithHTTPClient(&http.Client{Transport: h.wrap(tr), CheckRedirect: client.CheckRedirect}))
	}
	cli, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, nil, err
	}
	return cli, tr, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
