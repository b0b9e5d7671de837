package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/host"
)

// serviceBody is what pin reads of a swarm service spec: its name and what
// its tasks' containers run.
type serviceBody struct {
	Name         string
	TaskTemplate struct {
		ContainerSpec *struct {
			Image  string
			Labels map[string]string
		}
	}
}

// container is the spec's container, as InspectService gives it.
func (b serviceBody) container() host.Container {
	c := host.Container{Name: b.Name}
	if cs := b.TaskTemplate.ContainerSpec; cs != nil {
		c.Image, c.Labels = cs.Image, cs.Labels
	}
	return c
}

// readService reads a service spec body, as the Engine does.
func readService(body []byte) (host.Container, error) {
	var b serviceBody
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&b); err != nil {
		return host.Container{}, err
	}
	return b.container(), nil
}

// serviceHow is where a service's override is given.
const serviceHow = "give the service's containers the label (docker service update --container-label-add)"

// serviceCandidate is a service's task container as covering reads it.
// Its tasks are named <service>.<slot>.<task ID>, never a runs_on
// container's name: only labels put them under a module.
func serviceCandidate(c host.Container) enforce.Candidate {
	return enforce.Candidate{Labels: c.Labels, Image: c.Image}
}

// serviceCreate judges POST /services/create: the tasks' image, for the
// modules whose label the tasks' containers carry, against what they run
// on this Engine and the lock.
func (s *Server) serviceCreate(ctx context.Context, req Request) Response {
	const call = "services/create"
	if len(req.RequestBody) == 0 {
		return s.hidden(req, call, "", "the Engine passed pin no body for this service")
	}
	c, err := readService(req.RequestBody)
	if err != nil {
		return s.hidden(req, call, "", fmt.Sprintf("pin cannot read this service's body (%v)", err))
	}
	if c.Image == "" {
		return Response{Allow: true} // not a container service, or refused by the Engine
	}
	return s.judgeService(ctx, req, call, c, s.Enforcer.Covering(s.Host, serviceCandidate(c)), c.Labels)
}

// serviceUpdate judges POST /services/{id}/update: the spec the tasks will
// run (the request's, or with ?rollback=previous the one before the last
// update, read from the Engine) when its image changes, for the modules
// that cover the service now or after (a label dropped in the same update
// does not take it out).
func (s *Server) serviceUpdate(ctx context.Context, req Request, id string, q url.Values) Response {
	const call = "services/update"
	if s.Engine == nil {
		return s.undecided(req, call, id, fmt.Errorf("service %s: this plugin reads no Engine, and a service update is judged against the service as it is", id))
	}
	current, previous, err := s.Engine.InspectService(ctx, id)
	if err != nil {
		return s.undecided(req, call, id, err)
	}
	// A rollback runs the previous spec, its labels (and override) with it.
	next := previous
	if q.Get("rollback") != "previous" {
		if len(req.RequestBody) == 0 {
			return s.hidden(req, call, current.Name, "the Engine passed pin no body for this service update")
		}
		if next, err = readService(req.RequestBody); err != nil {
			return s.hidden(req, call, current.Name, fmt.Sprintf("pin cannot read this service update's body (%v)", err))
		}
	}
	if next.Image == "" || next.Image == current.Image {
		return Response{Allow: true} // nothing replaced, or refused by the Engine
	}
	modules := s.Enforcer.Covering(s.Host, serviceCandidate(next))
	for _, m := range s.Enforcer.Covering(s.Host, serviceCandidate(current)) {
		if !contains(modules, m) {
			modules = append(modules, m)
		}
	}
	return s.judgeService(ctx, req, call, next, modules, next.Labels)
}

// judgeService judges a service's new image for modules: as its registry
// serves it (the tasks pull it on their nodes), against what the modules
// run on this Engine and the lock.
func (s *Server) judgeService(ctx context.Context, req Request, call string, c host.Container, modules []*catalogue.Module, labels map[string]string) Response {
	if len(modules) == 0 {
		return Response{Allow: true}
	}
	if isImageID(c.Image) {
		return s.refuse(req, call, c.Name, fmt.Sprintf("service %q runs %s, which module %q covers: a service's tasks pull their image by reference; give it as repository:tag or repository@sha256:…", c.Name, c.Image, modules[0].Name))
	}
	seen := s.Enforcer.Observe(ctx, s.Host)
	if err := seen.Errors[s.Host]; err != nil {
		return s.undecided(req, call, c.Name, err)
	}
	d := decision{call: call, name: c.Name, labels: labels, how: serviceHow, prefix: fmt.Sprintf("service %s: ", c.Name)}
	return s.decide(ctx, req, d, modules, seen, nil, newImage{ref: c.Image})
}
