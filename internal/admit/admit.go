package admit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/observe"
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
	Enforcer *enforce.Enforcer
	// Namespaces maps each guarded namespace to the catalogue host that
	// reads it. Objects in other namespaces are allowed.
	Namespaces    map[string]string
	FailurePolicy FailurePolicy
	// Timeout is the webhook timeout when a request says none; zero means
	// DefaultTimeout.
	Timeout time.Duration
	Log     *slog.Logger
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
// holding the response; GET /healthz answers 200.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		io.WriteString(w, "ok\n")
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

// Review decides one admission request.
func (s *Server) Review(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	hostName, guarded := s.Namespaces[req.Namespace]
	if !guarded || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return resp
	}
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
	type pair struct {
		c   enforce.Candidate
		ctr string
	}
	var todo []pair
	for _, c := range obj.containers() {
		if old != nil && old.image(c.name) == c.image {
			continue // unchanged: nothing is replaced
		}
		todo = append(todo, pair{c: enforce.Candidate{Name: c.name, Labels: obj.podLabels, Workload: obj.workload, Pod: obj.pod, Image: c.image}, ctr: c.name})
	}
	ov := enforce.Override(obj.annotations, "annotate the "+req.Kind.Kind+" with")
	var decisions []decision
	var refusals []string
	var seen *observe.Observed
	for _, p := range todo {
		for _, m := range s.Enforcer.Covering(hostName, p.c) {
			if seen == nil {
				o := s.Enforcer.Observe(ctx, hostName)
				seen = &o
			}
			j, err := s.Enforcer.Judge(ctx, *seen, m, p.c.Image, ov)
			if err == nil && ctx.Err() != nil {
				err = ctx.Err()
			}
			if err != nil {
				s.logDecisions(req, decisions)
				return s.undecided(req, resp, fmt.Errorf("container %q (module %q, image %s): %w", p.ctr, m.Name, p.c.Image, err))
			}
			d := decision{container: p.ctr, module: m.Name, image: p.c.Image, verdict: string(j.Verdict), allowed: j.Allowed(), reason: j.Reason}
			switch {
			case j.Refusal != nil:
				refusals = append(refusals, fmt.Sprintf("container %q: %s", p.ctr, j.Refusal.Error()))
			case j.Accepted != nil:
				resp.Warnings = append(resp.Warnings, fmt.Sprintf("pin: container %q (module %q): %s accepted: %s", p.ctr, m.Name, j.Verdict, j.Reason))
				if resp.AuditAnnotations == nil {
					resp.AuditAnnotations = map[string]string{}
				}
				resp.AuditAnnotations["downgrade-"+p.ctr] = j.Reason
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
