package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
)

// Compose's labels of a service's container (the catalogue's names for
// them).
const (
	ComposeProject = catalogue.ComposeProjectLabel
	ComposeService = catalogue.ComposeServiceLabel
)

// DefaultTimeout bounds one decision when Server.Timeout is zero. The
// Engine waits for the plugin without a limit of its own; a person at
// `docker run` does not.
const DefaultTimeout = 10 * time.Second

// maxBody bounds a plugin request (a create request's body is a few KiB).
const maxBody = 8 << 20

// Server answers the Engine's authorization requests. Its fields are set
// before it serves.
type Server struct {
	Enforcer *enforce.Enforcer
	// Host is the catalogue host this Engine is: its containers are read
	// through the catalogue's adapter for it.
	Host string
	// FailOpen allows what cannot be decided; by default it is denied.
	FailOpen bool
	Timeout  time.Duration
	Log      *slog.Logger
}

// Request is the Engine's AuthZReq (and AuthZRes) body.
type Request struct {
	User           string `json:"User,omitempty"`
	RequestMethod  string `json:"RequestMethod,omitempty"`
	RequestURI     string `json:"RequestURI,omitempty"`
	RequestBody    []byte `json:"RequestBody,omitempty"`
	ResponseStatus int    `json:"ResponseStatusCode,omitempty"`
}

// Response is the plugin's answer.
type Response struct {
	Allow bool   `json:"Allow"`
	Msg   string `json:"Msg,omitempty"`
	Err   string `json:"Err,omitempty"`
}

// createBody is what pin reads of a container create request.
type createBody struct {
	Image  string            `json:"Image"`
	Labels map[string]string `json:"Labels"`
}

// ServeHTTP serves the plugin protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var out any
	switch r.URL.Path {
	case "/Plugin.Activate":
		out = map[string][]string{"Implements": {"authz"}}
	case "/AuthZPlugin.AuthZReq":
		var req Request
		if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&req); err != nil {
			out = s.undecided(Request{}, "", fmt.Errorf("reading the Engine's request: %w", err))
			break
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.timeout())
		out = s.Authorize(ctx, req)
		cancel()
	case "/AuthZPlugin.AuthZRes":
		out = Response{Allow: true}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.docker.plugins.v1+json")
	json.NewEncoder(w).Encode(out)
}

func (s *Server) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// createPath matches the create endpoint, with or without an API version.
var createPath = regexp.MustCompile(`^(/v[0-9.]+)?/containers/create$`)

// Authorize decides one request.
func (s *Server) Authorize(ctx context.Context, req Request) Response {
	u, err := url.ParseRequestURI(req.RequestURI)
	if err != nil || req.RequestMethod != http.MethodPost || !createPath.MatchString(u.Path) {
		return Response{Allow: true}
	}
	name := u.Query().Get("name")
	var body createBody
	if err := json.Unmarshal(req.RequestBody, &body); err != nil {
		return s.undecided(req, name, fmt.Errorf("reading the create request's body: %w", err))
	}
	if body.Image == "" {
		return Response{Allow: true} // the Engine refuses it itself
	}
	cand := enforce.Candidate{Name: name, Labels: body.Labels, Image: body.Image}
	covering := s.Enforcer.Covering(s.Host, cand)
	seen := s.Enforcer.Observe(ctx, s.Host)
	if err := seen.Errors[s.Host]; err != nil {
		return s.undecided(req, name, err)
	}
	snap := seen.Snapshots[s.Host]
	replaced := takenOver(snap, cand)
	modules := covering
	for _, m := range s.Enforcer.Catalogue.Modules {
		if !contains(modules, m) && coversAny(m, seen, s.Host, replaced) {
			modules = append(modules, m)
		}
	}
	ov := enforce.Override(body.Labels, "label the container with")
	var refusals []string
	for _, m := range modules {
		// What the new container replaces is the module's, whatever its
		// name now: label it so for the judgement.
		j, err := s.Enforcer.Judge(ctx, withModule(seen, s.Host, replaced, m.Name), m, body.Image, ov)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil {
			return s.undecided(req, name, fmt.Errorf("module %q, image %s: %w", m.Name, body.Image, err))
		}
		attrs := []any{"user", req.User, "container", name, "module", m.Name, "image", body.Image, "verdict", string(j.Verdict), "allowed", j.Allowed()}
		if j.Reason != "" {
			attrs = append(attrs, "override", j.Reason)
		}
		s.log().Info("containers/create", attrs...)
		if j.Refusal != nil {
			refusals = append(refusals, j.Refusal.Error())
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

// undecided answers as FailOpen says, and logs it.
func (s *Server) undecided(req Request, name string, err error) Response {
	err = enforce.Undecided(err)
	s.log().Error("containers/create undecided", "user", req.User, "container", name, "fail_open", s.FailOpen, "error", err.Error())
	if s.FailOpen {
		return Response{Allow: true}
	}
	return Response{Allow: false, Msg: fmt.Sprintf("%v; pin authz fails closed (--fail-open allows what it cannot decide)", err)}
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
