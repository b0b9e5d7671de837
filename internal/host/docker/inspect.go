package docker

import (
	"cmp"
	"context"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/pin-tool/pin/internal/host"
	pinimage "github.com/pin-tool/pin/internal/image"
)

// InspectImage reads the image ref names in the Engine's store: a
// reference ("repo:tag", "repo@sha256:…"), an image ID or a prefix of one
// ("sha256:3f2a…", "3f2a"), resolved by the Engine as it resolves the
// image of a container it creates. The image's ID is the one the Engine
// gives. An image the Engine does not hold is an error wrapping
// image.ErrNotFound.
func (h Host) InspectImage(ctx context.Context, ref string) (host.Image, error) {
	var out host.Image
	err := h.do(ctx, "inspecting image "+ref, func(ctx context.Context, cli *client.Client) error {
		resp, err := cli.ImageInspect(ctx, ref)
		if err != nil {
			return err
		}
		out, err = snapshotImage(resp.ID, resp)
		return err
	})
	return out, err
}

// InspectService reads a swarm service by ID or name: its container spec
// now and the one before its last update (what a rollback restores), each
// as a host.Container whose Name is the service's name, Image the spec's
// image reference and Labels the spec's container labels. previous is
// the zero Container when the service has never been updated. A service
// the Engine does not have is an error wrapping image.ErrNotFound.
func (h Host) InspectService(ctx context.Context, id string) (current, previous host.Container, err error) {
	err = h.do(ctx, "inspecting service "+id, func(ctx context.Context, cli *client.Client) error {
		svc, _, err := cli.ServiceInspectWithRaw(ctx, id, swarm.ServiceInspectOptions{})
		if err != nil {
			return err
		}
		current = serviceContainer(svc.Spec)
		if svc.PreviousSpec != nil {
			previous = serviceContainer(*svc.PreviousSpec)
		}
		return nil
	})
	return current, previous, err
}

// serviceContainer is what a service spec says of the containers of its
// tasks.
func serviceContainer(s swarm.ServiceSpec) host.Container {
	c := host.Container{Name: s.Name}
	if cs := s.TaskTemplate.ContainerSpec; cs != nil {
		c.Image, c.Labels = cs.Image, cs.Labels
	}
	return c
}

// do runs one call against the Engine with a client of its own, under the
// host's timeout; errors name the host, its address and what was done.
func (h Host) do(ctx context.Context, what string, f func(context.Context, *client.Client) error) error {
	timeout := cmp.Or(h.Timeout, DefaultTimeout)
	e, err := h.resolve()
	fail := func(err error) error {
		if cerrdefs.IsNotFound(err) {
			err = notFound{err}
		}
		return host.Errorf(h.Name, "host %s (%s): %s: %w", h.Name, cmp.Or(e.describe(), h.Addr, h.Context), what, e.explain(err))
	}
	if err != nil {
		return fail(err)
	}
	cli, tr, err := h.client(e, timeout)
	if err != nil {
		return fail(err)
	}
	defer tr.CloseIdleConnections()
	defer cli.Close()
	if _, err := call(ctx, timeout, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx, cli) }); err != nil {
		return fail(err)
	}
	return nil
}

// notFound is the Engine's "no such" answer, which is image.ErrNotFound.
type notFound struct{ error }

func (e notFound) Is(target error) bool { return target == pinimage.ErrNotFound }
func (e notFound) Unwrap() error        { return e.error }
