package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
)

// createBody is what pin reads of a container create request: what the
// Engine reads of it too (its first JSON value, as the Engine decodes it).
type createBody struct {
	Image  string            `json:"Image"`
	Labels map[string]string `json:"Labels"`
}

// bodyRule says when the Engine passes a plugin a request's body.
const bodyRule = "the Engine passes an authorization plugin a request's body only when it is JSON (Content-Type: application/json) and shorter than 1 MiB"

// create judges POST /containers/create?name=NAME.
func (s *Server) create(ctx context.Context, req Request, q url.Values) Response {
	const call = "containers/create"
	name := StoredName(q.Get("name"))
	var body createBody
	if len(req.RequestBody) == 0 {
		return s.hidden(req, call, name, "the Engine passed pin no body for this create")
	}
	if err := json.NewDecoder(bytes.NewReader(req.RequestBody)).Decode(&body); err != nil {
		return s.hidden(req, call, name, fmt.Sprintf("pin cannot read this create's body (%v)", err))
	}
	if body.Image == "" {
		return Response{Allow: true} // the Engine refuses it itself
	}
	cand := enforce.Candidate{Name: name, Labels: body.Labels, Image: body.Image}
	covering := s.Enforcer.Covering(s.Host, cand)
	seen := s.Enforcer.Observe(ctx, s.Host)
	if err := seen.Errors[s.Host]; err != nil {
		return s.undecided(req, call, name, err)
	}
	replaced := takenOver(seen.Snapshots[s.Host], cand)
	modules := covering
	for _, m := range s.Enforcer.Catalogue.Modules {
		if !contains(modules, m) && coversAny(m, seen, s.Host, replaced) {
			modules = append(modules, m)
		}
	}
	if len(modules) == 0 {
		return Response{Allow: true}
	}
	img, err := s.read(ctx, body.Image)
	if errors.Is(err, ErrImageID) {
		return s.refuse(req, call, name, fmt.Sprintf("container %q runs %s, which module %q covers: %v; give the image as repository:tag or repository@sha256:… (docker image inspect shows its RepoDigests)",
			name, body.Image, modules[0].Name, err))
	}
	if err != nil {
		return s.undecided(req, call, name, err)
	}
	return s.decide(ctx, req, decision{call: call, name: name, labels: body.Labels, how: "label the container with"}, modules, seen, replaced, img)
}

// rename judges POST /containers/{id}/rename?name=NAME: the container
// renamed is judged as a create under its new name, for each module that
// covers it under the new name and did not under the old one (a runs_on
// container name). Labels do not change with a rename, so what a label
// covers is not judged again; nor is renaming a container away from a
// module's name (as removing it, it leaves the lock as the floor).
func (s *Server) rename(ctx context.Context, req Request, id string, q url.Values) Response {
	const call = "containers/rename"
	name := StoredName(q.Get("name"))
	seen := s.Enforcer.Observe(ctx, s.Host)
	if err := seen.Errors[s.Host]; err != nil {
		return s.undecided(req, call, name, err)
	}
	snap := seen.Snapshots[s.Host]
	c, ok := findContainer(snap, id)
	if !ok {
		return Response{Allow: true} // the Engine answers that no such container exists
	}
	before := s.Enforcer.Covering(s.Host, enforce.Candidate{Name: c.Name, Labels: c.Labels, Image: c.Image})
	var gained []*catalogue.Module
	for _, m := range s.Enforcer.Covering(s.Host, enforce.Candidate{Name: name, Labels: c.Labels, Image: c.Image}) {
		if !contains(before, m) {
			gained = append(gained, m)
		}
	}
	if len(gained) == 0 {
		return Response{Allow: true}
	}
	img := newImage{ref: c.Image}
	if hi, ok := snap.Image(c.ImageID); ok {
		img.local = &hi
	} else {
		var err error
		if img, err = s.read(ctx, c.Image); err != nil {
			return s.undecided(req, call, name, fmt.Errorf("container %s's image %s: %w", c.Name, c.Image, err))
		}
	}
	d := decision{call: call, name: name, labels: c.Labels, how: "create the container with the label",
		prefix: fmt.Sprintf("renaming container %s to %s puts its image under module %q's name: ", c.Name, name, gained[0].Name)}
	return s.decide(ctx, req, d, gained, seen, nil, img)
}

// findContainer finds a container as the Engine does: by its full ID, else
// its name (one leading "/" or none), else a prefix of one ID alone.
func findContainer(snap *host.Snapshot, id string) (host.Container, bool) {
	for _, c := range snap.Containers {
		if c.ID == id {
			return c, true
		}
	}
	for _, c := range snap.Containers {
		if c.Name == StoredName(id) {
			return c, true
		}
	}
	var found []host.Container
	for _, c := range snap.Containers {
		if id != "" && strings.HasPrefix(c.ID, id) {
			found = append(found, c)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return host.Container{}, false
}

// hidden denies a create whose body pin cannot read, whatever FailOpen
// says: without it pin cannot see the image nor the labels (a pin.module
// or Compose label puts a container under a module), and the request, not
// pin, is the matter.
func (s *Server) hidden(req Request, call, name, why string) Response {
	what := "pin cannot see the image it runs nor its labels (a pin.module or Compose label puts a container under a module)"
	if ms := s.Enforcer.Covering(s.Host, enforce.Candidate{Name: name}); len(ms) > 0 {
		what = fmt.Sprintf("pin cannot see the image of container %q, which module %q covers", name, ms[0].Name)
	} else if name != "" {
		what = fmt.Sprintf("pin cannot see the image of container %q nor its labels (a pin.module or Compose label puts a container under a module)", name)
	}
	return s.refuse(req, call, name, fmt.Sprintf("%s, so %s: denied, with or without --fail-open. %s: send it so (the docker CLI, Compose and the Engine's SDKs do; keep labels and environment small, or put them in files)",
		why, what, strings.ToUpper(bodyRule[:1])+bodyRule[1:]))
}

// decision is what a request asks, for judging and for the log.
type decision struct {
	call, name string
	// labels hold the override; how says where to give it.
	labels map[string]string
	how    string
	// prefix goes before each refusal: what the request does, when it is
	// not a create.
	prefix string
}

// decide judges img for each module against what the module runs on the
// Engine (with the replaced containers as its) and the lock.
func (s *Server) decide(ctx context.Context, req Request, d decision, modules []*catalogue.Module, seen observe.Observed, replaced map[string]bool, img newImage) Response {
	ov := enforce.Override(d.labels, d.how)
	var refusals []string
	for _, m := range modules {
		ni, err := img.forModule(m)
		if err != nil {
			return s.refuse(req, d.call, d.name, err.Error())
		}
		// What the new container replaces is the module's, whatever its
		// name now: label it so for the judgement.
		j, err := s.Enforcer.JudgeImage(ctx, withModule(seen, s.Host, replaced, m.Name), m, ni, ov)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil {
			return s.undecided(req, d.call, d.name, fmt.Errorf("module %q, image %s: %w", m.Name, img.ref, err))
		}
		attrs := []any{"user", req.User, "container", d.name, "module", m.Name, "image", img.ref, "judged", ni.Ref(), "verdict", string(j.Verdict), "allowed", j.Allowed()}
		if j.Reason != "" {
			attrs = append(attrs, "override", j.Reason)
		}
		s.log().Info(d.call, attrs...)
		if j.Refusal != nil {
			pre := d.prefix
			if img.byID() {
				pre += fmt.Sprintf("image %s is %s on this Engine: ", img.ref, ni.Ref())
			}
			refusals = append(refusals, pre+j.Refusal.Error())
		}
	}
	if len(refusals) > 0 {
		return Response{Allow: false, Msg: "pin: " + strings.Join(refusals, "\n")}
	}
	return Response{Allow: true}
}

// takenOver lists the containers of snap that the new container replaces:
// the one of the same name, and those of the same Compose project and
// service.
func takenOver(snap *host.Snapshot, c enforce.Candidate) map[string]bool {
	out := map[string]bool{}
	p, svc := c.Labels[ComposeProject], c.Labels[ComposeService]
	for _, x := range snap.Containers {
		switch {
		case c.Name != "" && x.Name == c.Name:
			out[x.ID] = true
		case p != "" && svc != "" && x.Labels[ComposeProject] == p && x.Labels[ComposeService] == svc:
			out[x.ID] = true
		}
	}
	return out
}

// coversAny reports whether module m takes over one of the replaced
// containers on hostName.
func coversAny(m *catalogue.Module, seen observe.Observed, hostName string, replaced map[string]bool) bool {
	if len(replaced) == 0 {
		return false
	}
	names := map[string]bool{}
	for _, c := range seen.Snapshots[hostName].Containers {
		if replaced[c.ID] {
			names[c.Name] = true
		}
	}
	obs, _ := observe.Observations(m, seen)
	for _, o := range obs {
		if o.Host == hostName && names[o.Container] {
			return true
		}
	}
	return false
}

// withModule is seen with the replaced containers labelled pin.module =
// module, so that they are the module's floors (Compose renamed the one
// it replaces); seen itself is not changed.
func withModule(seen observe.Observed, hostName string, replaced map[string]bool, module string) observe.Observed {
	if len(replaced) == 0 {
		return seen
	}
	orig := seen.Snapshots[hostName]
	snap := *orig
	snap.Containers = make([]host.Container, len(orig.Containers))
	for i, c := range orig.Containers {
		if replaced[c.ID] {
			c.Labels = maps.Clone(c.Labels)
			if c.Labels == nil {
				c.Labels = map[string]string{}
			}
			c.Labels[catalogue.ModuleLabel] = module
		}
		snap.Containers[i] = c
	}
	out := observe.Observed{Snapshots: maps.Clone(seen.Snapshots), Errors: seen.Errors}
	out.Snapshots[hostName] = &snap
	return out
}

func contains(ms []*catalogue.Module, m *catalogue.Module) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}
