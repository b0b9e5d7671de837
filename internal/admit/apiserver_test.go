package admit

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionregistrationv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"

	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestAdmitAgainstAPIServer registers pin admit with a real kube-apiserver
// (a CA made here in caBundle, the webhook at https://127.0.0.1:<port>) for
// the test's namespace, where a Deployment's replica runs 1.27.3 (pushed to
// a real registry). Updates of the Deployment (dry runs: the state stays)
// are judged by the API server calling pin: older → denied with resolve's
// words; newer → allowed; older with the annotation → allowed and logged;
// an unordered image → denied; a Deployment no module takes over →
// allowed. Then the webhook stops: failurePolicy Fail refuses, Ignore
// allows.
func TestAdmitAgainstAPIServer(t *testing.T) {
	reg := testenv.Registry(t)
	kc := testenv.Kubernetes(t)
	id := time.Now().UnixNano()
	repo := fmt.Sprintf("%s/admit/forgejo-%d", reg, id)
	release := func(tag, date string) string {
		return testimage.PushRelease(t, repo, tag, date, testimage.Options{Content: tag}).DigestStr()
	}
	release("1.22.6", "2024-12-12")
	running := release("1.27.3", "2026-09-01")
	release("1.28.0", "2026-10-01")
	// No version, no build date: no order.
	testimage.Push(t, repo+":nightly", testimage.Build(t, testimage.Options{Content: "nightly"}))

	k := testenv.NewCluster(t, kc)
	ns := k.Namespace(t, "pin-admit")
	rs := k.Deployment(t, ns, "forgejo", "forgejo-6d9f")
	k.RunningPod(t, ns, "forgejo-6d9f-aaaaa", rs, repo+":1.27.3", repo+"@"+running)
	k.Deployment(t, ns, "other", "other-5c4b")

	dir := t.TempDir()
	cat := fmt.Sprintf(`host "prod" {
  kubernetes = { kubeconfig = %q, namespace = %q }
}

module "forge" {
  image  = %q
  policy = "at-least-running"
  runs_on "prod" {
    workload  = "deployment/forgejo"
    container = "forgejo"
  }
}
`, kc, ns, repo)
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	e, memo, err := enforce.Load(filepath.Join(dir, "catalogue.hcl"), filepath.Join(dir, "pin.lock.hcl"),
		source.Options{CacheDir: filepath.Join(dir, "cache"), Concurrency: 4, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	logs := &testenv.Buffer{}
	srv := &Server{Enforcer: e, Namespaces: map[string]string{ns: "prod"}, FailurePolicy: Fail, Log: slog.New(slog.NewJSONHandler(logs, nil))}
	caPEM, certFile, keyFile := testCA(t, dir)
	certs := &Certificates{CertFile: certFile, KeyFile: keyFile}
	if err := certs.Load(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv, TLSConfig: certs.TLSConfig(), ReadHeaderTimeout: 5 * time.Second}
	go hs.ServeTLS(ln, "", "")
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			hs.Close()
		}
	})

	ctx := context.Background()
	whName := fmt.Sprintf("pin-admit-%d", id)
	url := fmt.Sprintf("https://%s/validate", ln.Addr())
	whs := k.CS.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	k.DeploymentWebhook(t, whName, ns, url, caPEM, 5)

	// update sets the Deployment's image (a dry run) and returns the API
	// server's answer.
	update := func(name, image string, annotations map[string]string) error {
		d, err := k.CS.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d.Spec.Template.Spec.Containers[0].Image = image
		d.Annotations = annotations
		_, err = k.CS.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	// The API server picks the configuration up within a moment.
	var err1 error
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if err1 = update("forgejo", repo+":1.22.6", nil); err1 != nil {
			break
		}
	}
	for _, want := range []string{`admission webhook "images.pin.dev" denied the request`, `pin: container "forgejo": module "forge": refusing a downgrade: the new image 1.22.6`,
		"older than what prod/deployment/forgejo/forgejo runs", "version 1.22.6 < 1.27.3", "pin.dev/allow-downgrade"} {
		if err1 == nil || !strings.Contains(err1.Error(), want) {
			t.Fatalf("older image: want %q in the refusal, got %v", want, err1)
		}
	}

	if err := update("forgejo", repo+":1.28.0", nil); err != nil {
		t.Errorf("newer image refused: %v", err)
	}
	// Warm: the digest of 1.28.0 and what runs are remembered; only the
	// tag is asked again.
	before := memo.Asked()
	if err := update("forgejo", repo+":1.28.0", nil); err != nil {
		t.Errorf("newer image refused: %v", err)
	}
	if n := memo.Asked() - before; n != 1 {
		t.Errorf("a warm admission asked the registry %d times, want 1 (the tag)", n)
	}

	if err := update("forgejo", repo+":1.22.6", map[string]string{enforce.AllowDowngradeKey: "rollback of the 1.27 migration bug"}); err != nil {
		t.Errorf("annotated downgrade refused: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, `"override":"downgrade allowed: rollback of the 1.27 migration bug"`) || !strings.Contains(l, `"verdict":"downgrade"`) {
		t.Errorf("the accepted downgrade is not logged with its reason:\n%s", l)
	}

	err = update("forgejo", repo+":nightly", nil)
	if err == nil || !strings.Contains(err.Error(), "cannot be ordered against what prod/deployment/forgejo/forgejo runs") {
		t.Errorf("unordered image: %v", err)
	}
	if err := update("other", repo+":1.22.6", nil); err != nil {
		t.Errorf("a Deployment no module takes over was refused: %v", err)
	}

	// A caBundle that did not sign the webhook's certificate: the API
	// server cannot call it, and failurePolicy Fail refuses.
	otherCA, _, _ := testCA(t, t.TempDir())
	setWebhook(t, whs, whName, func(w *admissionregistrationv1.ValidatingWebhook) { w.ClientConfig.CABundle = otherCA })
	var errCert error
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if errCert = update("forgejo", repo+":1.28.0", nil); errCert != nil {
			break
		}
	}
	if errCert == nil || !strings.Contains(errCert.Error(), "x509: certificate signed by unknown authority") {
		t.Errorf("bad certificate, failurePolicy Fail: %v", errCert)
	}

	// The webhook stops: the API server applies failurePolicy.
	hs.Close()
	stopped = true
	err = update("forgejo", repo+":1.28.0", nil)
	if err == nil || !strings.Contains(err.Error(), `failed calling webhook "images.pin.dev"`) {
		t.Errorf("webhook down, failurePolicy Fail: %v", err)
	}
	ignore := admissionregistrationv1.Ignore
	setWebhook(t, whs, whName, func(w *admissionregistrationv1.ValidatingWebhook) { w.FailurePolicy = &ignore })
	var errIgnore error
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if errIgnore = update("forgejo", repo+":1.22.6", nil); errIgnore == nil {
			break
		}
	}
	if errIgnore != nil {
		t.Errorf("webhook down, failurePolicy Ignore: %v", errIgnore)
	}
}

// setWebhook changes the registered webhook.
func setWebhook(t *testing.T, whs admissionregistrationv1client.ValidatingWebhookConfigurationInterface, name string, change func(*admissionregistrationv1.ValidatingWebhook)) {
	t.Helper()
	cur, err := whs.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	change(&cur.Webhooks[0])
	if _, err := whs.Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
