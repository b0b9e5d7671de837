package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/enforce"
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
	// Engine reads the Engine's image store and swarm services: the image
	// a create names is judged as the Engine holds it. Nil (a snapshot
	// host, in tests) judges references as their registries serve them and
	// cannot judge image IDs nor service updates.
	Engine Engine
	// FailOpen allows what cannot be decided because pin cannot work (the
	// Engine or a registry fails, the time is spent); by default it is
	// denied. A request that hides what it asks is denied either way.
	FailOpen bool
	Timeout  time.Duration
	Log      *slog.Logger
}

// Request is the Engine's AuthZReq (and AuthZRes) body.
type Request struct {
	User          string `json:"User,omitempty"`
	RequestMethod string `json:"RequestMethod,omitempty"`
	RequestURI    string `json:"RequestURI,omitempty"`
	RequestBody   []byte `json:"RequestBody,omitempty"`
	// RequestHeaders are the request's headers, one value each.
	RequestHeaders map[string]string `json:"RequestHeaders,omitempty"`
	ResponseStatus int               `json:"ResponseStatusCode,omitempty"`
}

// Response is the plugin's answer.
type Response struct {
	Allow bool   `json:"Allow"`
	Msg   string `json:"Msg,omitempty"`
	Err   string `json:"Err,omitempty"`
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
			out = s.undecided(Request{}, "request", "", fmt.Errorf("reading the Engine's request: %w", err))
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

// The calls pin judges, with or without an API version: each can put an
// image under a name a module covers. docs/reference.md says why the
// others cannot.
var (
	createPath        = regexp.MustCompile(`^(/v[0-9.]+)?/containers/create$`)
	renamePath        = regexp.MustCompile(`^(/v[0-9.]+)?/containers/([^/]+)/rename$`)
	serviceCreatePath = regexp.MustCompile(`^(/v[0-9.]+)?/services/create$`)
	serviceUpdatePath = regexp.MustCompile(`^(/v[0-9.]+)?/services/([^/]+)/update$`)
)

// Authorize decides one request.
func (s *Server) Authorize(ctx context.Context, req Request) Response {
	u, err := url.ParseRequestURI(req.RequestURI)
	if err != nil || req.RequestMethod != http.MethodPost {
		return Response{Allow: true}
	}
	switch p := u.Path; {
	case createPath.MatchString(p):
		return s.create(ctx, req, u.Query())
	case renamePath.MatchString(p):
		return s.rename(ctx, req, renamePath.FindStringSubmatch(p)[2], u.Query())
	case serviceCreatePath.MatchString(p):
		return s.serviceCreate(ctx, req)
	case serviceUpdatePath.MatchString(p):
		return s.serviceUpdate(ctx, req, serviceUpdatePath.FindStringSubmatch(p)[2], u.Query())
	}
	return Response{Allow: true}
}

// StoredName is a container name as the Engine stores it, without its one
// leading "/": the Engine takes "/forgejo" and "forgejo" for the same name.
func StoredName(name string) string { return strings.TrimPrefix(name, "/") }

// undecided answers what pin could not decide because it could not work
// (the Engine or a registry failed, the time was spent) as FailOpen says,
// and logs it. call names the request ("containers/create").
func (s *Server) undecided(req Request, call, name string, err error) Response {
	err = enforce.Undecided(err)
	s.log().Error(call+" undecided", "user", req.User, "container", name, "fail_open", s.FailOpen, "error", err.Error())
	if s.FailOpen {
		return Response{Allow: true}
	}
	return Response{Allow: false, Msg: fmt.Sprintf("%v; pin authz fails closed (--fail-open allows what it cannot decide)", err)}
}

// refuse denies a request that hides what it asks, or asks what pin
// cannot read (an image ID the Engine does not hold): pin works, the
// request is the matter, so FailOpen does not apply. It is logged.
func (s *Server) refuse(req Request, call, name, msg string) Response {
	s.log().Warn(call+" refused unread", "user", req.User, "container", name, "fail_open", s.FailOpen, "reason", msg)
	return Response{Allow: false, Msg: "pin: " + msg}
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
