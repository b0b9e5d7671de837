package admit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/resolve"
)

const repo = "registry.example.org/forge/forgejo"

func digestOf(tag string) string {
	sum := sha256.Sum256([]byte(tag))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// images are what the fake registry holds, by tag and by digest.
var images = map[string]image.Image{}

func init() {
	for tag, date := range map[string]string{"1.22.6": "2024-12-12", "1.27.3": "2026-09-01", "1.28.0.1": "2026-10-01"} {
		created, _ := time.Parse("2006-01-02", date)
		img := image.Image{Repository: repo, Tag: tag, Digest: digestOf(tag), Created: created, Labels: map[string]string{image.LabelVersion: tag}}
		images[tag], images[img.Digest] = img, img
	}
}

// fakeRegistry serves images, or fails every call with err; calls counts.
type fakeRegistry struct {
	err   error
	calls int
}

func (f *fakeRegistry) Tags(context.Context, string) ([]string, error) {
	return nil, errors.New("not asked")
}
func (f *fakeRegistry) Image(_ context.Context, _, ref, _ string) (image.Image, error) {
	f.calls++
	if f.err != nil {
		return image.Image{}, f.err
	}
	img, ok := images[ref]
	if !ok {
		return image.Image{}, image.ErrNotFound
	}
	return img, nil
}

// hostFunc is a host whose answer the test gives.
type hostFunc func(context.Context) (*host.Snapshot, error)

func (f hostFunc) Observe(ctx context.Context) (*host.Snapshot, error) { return f(ctx) }

// cluster: namespace apps, where deployment/forgejo's replica runs 1.27.3.
func cluster(context.Context) (*host.Snapshot, error) {
	d := digestOf("1.27.3")
	return &host.Snapshot{Host: "prod", Containers: []host.Container{{ID: "forgejo-1/forgejo", Name: "forgejo", Image: repo + ":1.27.3", ImageID: d,
		State: "running", Labels: map[string]string{"app": "forgejo"}, Workload: "deployment/forgejo", Pod: "forgejo-1"}},
		Images: []host.Image{{ID: d, RepoDigests: []string{repo + "@" + d}}}}, nil
}

func testServer(t *testing.T, h observe.Host, reg *fakeRegistry) *Server {
	t.Helper()
	p := filepath.Join(t.TempDir(), "catalogue.hcl")
	os.WriteFile(p, []byte(`host "prod" {
  kubernetes = { namespace = "apps" }
}

module "forge" {
  image  = "`+repo+`"
  policy = "at-least-running"
  runs_on "prod" {
    workload  = "deployment/forgejo"
    container = "forgejo"
  }
}
`), 0o644)
	cat, diags := catalogue.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := &enforce.Enforcer{Catalogue: cat, Hosts: map[string]observe.Host{"prod": h}, Registry: func(string) resolve.Registry { return reg }}
	return &Server{Enforcer: e, Namespaces: map[string]string{"apps": "prod"}}
}

// request is an admission request for kind with the object (and old
// object) given as JSON.
func request(kind, op, obj, old string) *admissionv1.AdmissionRequest {
	r := &admissionv1.AdmissionRequest{UID: "u", Kind: metav1.GroupVersionKind{Kind: kind}, Namespace: "apps", Operation: admissionv1.Operation(op),
		Object: runtime.RawExtension{Raw: []byte(obj)}}
	if old != "" {
		r.OldObject = runtime.RawExtension{Raw: []byte(old)}
	}
	return r
}

func deployment(tag string, replicas int) string {
	return fmt.Sprintf(`{"metadata":{"name":"forgejo"},"spec":{"replicas":%d,"template":{"metadata":{"labels":{"app":"forgejo"}},
"spec":{"containers":[{"name":"forgejo","image":"%s:%s"}]}}}}`, replicas, repo, tag)
}

// TestReviewJudgesWhatChanges: on UPDATE only a changed image is judged
// (scaling a Deployment whose image is behind is not refused, and asks
// nothing); a pod created by the Deployment's ReplicaSet is the
// Deployment's; a CronJob's template is read.
func TestReviewJudgesWhatChanges(t *testing.T) {
	reg := &fakeRegistry{}
	observed := 0
	s := testServer(t, hostFunc(func(ctx context.Context) (*host.Snapshot, error) { observed++; return cluster(ctx) }), reg)
	ctx := context.Background()

	if r := s.Review(ctx, request("Deployment", "UPDATE", deployment("1.22.6", 3), deployment("1.22.6", 1))); !r.Allowed || observed+reg.calls != 0 {
		t.Errorf("scaling: allowed %v, %d host reads, %d registry calls", r.Allowed, observed, reg.calls)
	}
	if r := s.Review(ctx, request("Deployment", "UPDATE", deployment("1.22.6", 1), deployment("1.27.3", 1))); r.Allowed || r.Result.Code != 403 ||
		!strings.Contains(r.Result.Message, `refusing a downgrade`) {
		t.Errorf("downgrade: %+v", r)
	}
	pod := `{"metadata":{"name":"forgejo-7b8c9-x","labels":{"app":"forgejo","pod-template-hash":"7b8c9"},
"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"forgejo-7b8c9","uid":"1","controller":true}]},
"spec":{"containers":[{"name":"forgejo","image":"` + repo + `:1.22.6"}]}}`
	if r := s.Review(ctx, request("Pod", "CREATE", pod, "")); r.Allowed {
		t.Errorf("a pod of the Deployment's ReplicaSet with an older image was allowed")
	}
	cron := `{"metadata":{"name":"forgejo"},"spec":{"schedule":"@daily","jobTemplate":{"spec":{"template":{"metadata":{"labels":{"app":"forgejo"}},
"spec":{"containers":[{"name":"forgejo","image":"` + repo + `:1.22.6"}]}}}}}}`
	if r := s.Review(ctx, request("CronJob", "CREATE", cron, "")); !r.Allowed {
		t.Errorf("a CronJob no module takes over was refused: %+v", r.Result)
	}
	if r := s.Review(ctx, request("ConfigMap", "CREATE", `{}`, "")); !r.Allowed {
		t.Errorf("a ConfigMap was refused")
	}
}

// TestReviewUndecided: a registry that fails, or a cluster that does not
// answer within the budget, is answered as the failure policy says; the
// answer comes when the budget is spent, not when the host answers.
func TestReviewUndecided(t *testing.T) {
	broken := &fakeRegistry{err: errors.New("dial tcp 10.0.0.1:443: connect: connection refused")}
	hung := hostFunc(func(ctx context.Context) (*host.Snapshot, error) { <-ctx.Done(); return nil, ctx.Err() })
	for _, tt := range []struct {
		name   string
		h      observe.Host
		reg    *fakeRegistry
		policy FailurePolicy
		want   string
	}{
		{"registry down, Fail", hostFunc(cluster), broken, Fail, "connection refused"},
		{"registry down, Ignore", hostFunc(cluster), broken, Ignore, "connection refused"},
		{"cluster hangs, Fail", hung, &fakeRegistry{}, Fail, "context deadline exceeded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := testServer(t, tt.h, tt.reg)
			s.FailurePolicy = tt.policy
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			r := s.Review(ctx, request("Deployment", "UPDATE", deployment("1.28.0.1", 1), deployment("1.27.3", 1)))
			cancel()
			text, _ := json.Marshal(r)
			says := "failurePolicy Fail: denied"
			if tt.policy == Ignore {
				says = "failurePolicy Ignore: allowed unchecked"
			}
			if r.Allowed != (tt.policy == Ignore) || !strings.Contains(string(text), tt.want) || !strings.Contains(string(text), says) ||
				!strings.Contains(string(text), "pin could not decide") {
				t.Errorf("%s: %s", tt.name, text)
			}
		})
	}
}
