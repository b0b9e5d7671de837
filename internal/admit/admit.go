package admit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/resolve"
)

// FailurePolicy is what the webhook answers when it cannot decide; it
// should be the failurePolicy of the ValidatingWebhookConfiguration, which
// is what the API server does when the webhook does not answer.
type FailurePolicy string

const (
	// Fail denies what cannot be decided.
	Fail FailurePolicy = "Fail"
	// Ignore allows what cannot be decided, with a warning.
	Ignore FailurePolicy = "Ignore"
)

// DefaultTimeout is the webhook timeout assumed when a request says none
// (the API server's default timeoutSeconds).
const DefaultTimeout = 10 * time.Second

// maxBody bounds an AdmissionReview (the API server's own request limit is
// 3 MiB).
const maxBody = 3 << 20

// Server answers AdmissionReviews. Its fields are set before it serves and
// not changed after.
type Server struct {
	// Enforcer holds the catalogue and the lock. It may be left nil and
	// given later with Install, so that the server answers /healthz (and
	// /readyz with 503) while they load.
	Enforcer *enforce.Enforcer
	// Namespaces maps each guarded namespace to the catalogue host that
	// reads it. Objects in other namespaces are allowed.
	Namespaces map[string]string
	// Owners reads, by catalogue host, the objects that own pods and jobs
	// (a Pod's ReplicaSet and its Deployment, a Pod's Job and its
	// CronJob). A host without one (a snapshot host, in tests) names them
	// from the request and names alone.
	Owners        map[string]Owners
	FailurePolicy FailurePolicy
	// Timeout is the webhook timeout when a request says none; zero means
	// DefaultTimeout.
	Timeout time.Duration
	Log     *slog.Logger

	installed installed
}

// budget is the time to decide in: the timeout the API server sends in
// the URL (?timeout=5s), else s.Timeout, less a fifth for the answer's
// way back.
func (s *Server) budget(r *http.Request) time.Duration {
	t := s.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	if q, err := time.ParseDuration(r.URL.Query().Get("timeout")); err == nil && q > 0 {
		t = q
	}
	return t * 4 / 5
}

// ServeHTTP answers POST /validate (any path) with an AdmissionReview
// holding the response; GET /healthz answers 200 (the process lives);
// GET /readyz answers 200 only when the catalogue and the lock are
// loaded (see Ready), else 503 with the reason.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		io.WriteString(w, "ok\n")
		return
	case "/readyz":
		if err := s.Ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "pin admit takes POSTed AdmissionReviews", http.StatusMethodNotAllowed)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not an admission.k8s.io/v1 AdmissionReview with a request: %v", err), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.budget(r))
	defer cancel()
	resp := s.Review(ctx, review.Request)
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	if out.APIVersion == "" {
		out.APIVersion, out.Kind = "admission.k8s.io/v1", "AdmissionReview"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// decision is one judged container, for the log.
type decision struct {
	container, module, image, verdict, reason string
	allowed                                   bool
}

// item is one container image to judge, with the modules that cover it.
type item struct {
	cand    enforce.Candidate
	ctr     string // the container, as refusals name it
	modules []*catalogue.Module
	ov      resolve.Override
	// fromOwners: without an override of its own, the objects obj belongs
	// to may give it (not for an ephemeral container).
	fromOwners bool
}

// Review decides one admission request.
func (s *Server) Review(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	hostName, guarded := s.Namespaces[req.Namespace]
	if !guarded || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return resp
	}
	e := s.enforcer()
	if e == nil {
		return s.undecided(req, resp, errNotReady)
	}
	// The namespace's host is judged by its own environment's lock.
	e = e.For(hostName)
	obj, err := decodeObject(req.Kind.Kind, req.Object.Raw)
	if errors.Is(err, errNotWorkload) {
		return resp
	}
	if err != nil {
		return s.undecided(req, resp, fmt.Errorf("reading the %s: %w", req.Kind.Kind, err))
	}
	var old *object
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		if old, err = decodeObject(req.Kind.Kind, req.OldObject.Raw); err != nil {
			return s.undecided(req, resp, fmt.Errorf("reading the old %s: %w", req.Kind.Kind, err))
		}
	}
	tr := newTracer(s.Owners[hostName])
	deep := tracesOwners(e.Catalogue, hostName)
	for _, o := range []*object{obj, old} {
		if o == nil {
			continue
		}
		if err := tr.trace(ctx, o, deep); err != nil {
			return s.undecided(req, resp, fmt.Errorf("%s %s: %w", o.kind, o.name, err))
		}
	}
	items := s.items(e, hostName, obj, old)
	var decisions []decision
	var refusals []string
	var seen *observe.Observed
	for _, it := range items {
		for _, m := range it.modules {
			if seen == nil {
				o := e.Observe(ctx, hostName)
				seen = &o
			}
			j, err := e.Judge(ctx, *seen, m, it.cand.Image, it.ov)
			if err == nil && j.Refusal != nil && it.fromOwners && it.ov.Downgrade == "" {
				// The workload's own annotation reaches the pods and jobs
				// its controllers create.
				var ov resolve.Override
				var found bool
				if ov, found, err = tr.ownerOverride(ctx, obj, howOf(obj)); err == nil && found {
					j, err = e.Judge(ctx, *seen, m, it.cand.Image, ov)
				}
			}
			if err == nil && ctx.Err() != nil {
				err = ctx.Err()
			}
			if err != nil {
				s.logDecisions(req, decisions)
				return s.undecided(req, resp, fmt.Errorf("%s (module %q, image %s): %w", it.ctr, m.Name, it.cand.Image, err))
			}
			d := decision{container: it.cand.Name, module: m.Name, image: it.cand.Image, verdict: string(j.Verdict), allowed: j.Allowed(), reason: j.Reason}
			switch {
			case j.Refusal != nil:
				refusals = append(refusals, fmt.Sprintf("%s: %s", it.ctr, j.Refusal.Error()))
			case j.Accepted != nil:
				resp.Warnings = append(resp.Warnings, fmt.Sprintf("pin: %s (module %q): %s accepted: %s", it.ctr, m.Name, j.Verdict, j.Reason))
				if resp.AuditAnnotations == nil {
					resp.AuditAnnotations = map[string]string{}
				}
				resp.AuditAnnotations["downgrade-"+it.cand.Name] = j.Reason
			}
			decisions = append(decisions, d)
		}
	}
	s.logDecisions(req, decisions)
	if len(refusals) > 0 {
		resp.Allowed = false
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
			Message: "pin: " + strings.Join(refusals, "\n")}
	}
	return resp
}

// items lists the container images obj puts in place and the modules
// that cover each. On UPDATE only an image that changes is judged, and a
// module covers it when it covers the new object or the old one (an
// update that drops the label that made the module cover it is still the
// module's), or, for a container the update renames, when it covered the
// container the update removes and the new image is of its repository.
// An ephemeral container added to a Pod is judged for every module that
// covers a container of the Pod, with its own override.
func (s *Server) items(e *enforce.Enforcer, hostName string, obj, old *object) []item {
	cover := func(o *object, name, img string) []*catalogue.Module {
		return e.Covering(hostName, enforce.Candidate{Name: name, Labels: o.podLabels, Workload: o.workload, Pod: o.pod, Image: img})
	}
	how := howOf(obj)
	var items []item
	for _, c := range obj.containers() {
		if old != nil && old.image(c.name) == c.image {
			continue // unchanged: nothing is replaced
		}
		mods := cover(obj, c.name, c.image)
		if old != nil {
			mods = union(mods, cover(old, c.name, c.image))
			if old.image(c.name) == "" {
				repo := ""
				if img, err := enforce.ParseRef(c.image); err == nil {
					repo = img.Repository
				}
				for _, gone := range old.containers() {
					if obj.image(gone.name) != "" {
						continue
					}
					for _, m := range cover(old, gone.name, gone.image) {
						if m.Image == repo {
							mods = union(mods, []*catalogue.Module{m})
						}
					}
				}
			}
		}
		items = append(items, item{cand: enforce.Candidate{Name: c.name, Labels: obj.podLabels, Workload: obj.workload, Pod: obj.pod, Image: c.image},
			ctr: fmt.Sprintf("container %q", c.name), modules: mods, ov: enforce.Override(obj.annotations, how), fromOwners: true})
	}
	var pod []*catalogue.Module // the modules of the Pod's containers, once an ephemeral one is new
	podRead := false
	for _, c := range obj.ephemeral() {
		if old != nil && old.ephemeralImage(c.name) == c.image {
			continue
		}
		for _, o := range []*object{obj, old} {
			if o == nil || podRead {
				continue
			}
			for _, c := range o.containers() {
				pod = union(pod, cover(o, c.name, c.image))
			}
		}
		podRead = true
		items = append(items, item{cand: enforce.Candidate{Name: c.name, Labels: obj.podLabels, Workload: obj.workload, Pod: obj.pod, Image: c.image},
			ctr: fmt.Sprintf("ephemeral container %q", c.name), modules: pod,
			ov: enforce.OverrideBy(obj.annotations, enforce.AllowEphemeralKey, "annotate the Pod with")})
	}
	return items
}

// union is a with the modules of b it lacks, in order.
func union(a, b []*catalogue.Module) []*catalogue.Module {
	for _, m := range b {
		if !slices.Contains(a, m) {
			a = append(a, m)
		}
	}
	return a
}

// undecided answers what could not be decided as the failure policy says,
// and says so.
func (s *Server) undecided(req *admissionv1.AdmissionRequest, resp *admissionv1.AdmissionResponse, err error) *admissionv1.AdmissionResponse {
	err = enforce.Undecided(err)
	s.log().Error("admission undecided", "uid", string(req.UID), "user", req.UserInfo.Username, "operation", string(req.Operation),
		"namespace", req.Namespace, "kind", req.Kind.Kind, "name", req.Name, "failure_policy", string(s.policy()), "error", err.Error())
	if s.policy() == Ignore {
		resp.Allowed = true
		resp.Warnings = append(resp.Warnings, fmt.Sprintf("%v; failurePolicy Ignore: allowed unchecked", err))
		return resp
	}
	resp.Allowed = false
	resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusServiceUnavailable, Reason: metav1.StatusReasonServiceUnavailable,
		Message: fmt.Sprintf("%v; failurePolicy Fail: denied", err)}
	return resp
}

func (s *Server) policy() FailurePolicy {
	if s.FailurePolicy == Ignore {
		return Ignore
	}
	return Fail
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// logDecisions writes one line per judged container.
func (s *Server) logDecisions(req *admissionv1.AdmissionRequest, ds []decision) {
	for _, d := range ds {
		attrs := []any{"uid", string(req.UID), "user", req.UserInfo.Username, "operation", string(req.Operation), "namespace", req.Namespace,
			"kind", req.Kind.Kind, "name", req.Name, "container", d.container, "module", d.module, "image", d.image,
			"verdict", d.verdict, "allowed", d.allowed}
		if d.reason != "" {
			attrs = append(attrs, "override", d.reason)
		}
		s.log().Info("admission", attrs...)
	}
}
