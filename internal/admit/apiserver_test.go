package admit

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	admissionregistrationv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/internal/testenv"
	"github.com/pin-tool/pin/internal/testimage"
)

// syncBuffer is a log sink the server writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

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
	push := func(tag, date string, labelled bool) string {
		var created time.Time
		if date != "" {
			created, _ = time.Parse("2006-01-02", date)
		}
		var labels map[string]string
		if labelled {
			labels = map[string]string{"org.opencontainers.image.version": tag}
		}
		img := testimage.Build(t, testimage.Options{Content: tag, Created: created, Labels: labels})
		return testimage.Push(t, repo+":"+tag, img).DigestStr()
	}
	push("1.22.6", "2024-12-12", true)
	running := push("1.27.3", "2026-09-01", true)
	push("1.28.0", "2026-10-01", true)
	push("nightly", "", false) // no version, no build date: no order

	k := kubeClient(t, kc)
	ns := k.namespace(t)
	rs := k.deployment(t, ns, "forgejo", "forgejo-6d9f")
	k.runningPod(t, ns, "forgejo-6d9f-aaaaa", rs, repo+":1.27.3", repo+"@"+running)
	k.deployment(t, ns, "other", "other-5c4b")

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
	logs := &syncBuffer{}
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
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(5)
	url := fmt.Sprintf("https://%s/validate", ln.Addr())
	wh := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: whName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "images.pin.dev",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
			}},
			// Only this test's namespace: other tests share the API server.
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}}}
	whs := k.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if _, err := whs.Create(ctx, wh, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { whs.Delete(context.Background(), whName, metav1.DeleteOptions{}) })

	// update sets the Deployment's image (a dry run) and returns the API
	// server's answer.
	update := func(name, image string, annotations map[string]string) error {
		d, err := k.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d.Spec.Template.Spec.Containers[0].Image = image
		d.Annotations = annotations
		_, err = k.cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
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
		"older than what prod/forgejo-6d9f-aaaaa/forgejo runs", "version 1.22.6 < 1.27.3", "pin.dev/allow-downgrade"} {
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
	if err == nil || !strings.Contains(err.Error(), "cannot be ordered against what prod/forgejo-6d9f-aaaaa/forgejo runs") {
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

// kube stands in for a Deployment's controllers and the kubelet, as in
// cmd/pin's Kubernetes tests.
type kube struct{ cs *kubernetes.Clientset }

func kubeClient(t *testing.T, kubeconfig string) kube {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kube{cs}
}

func (k kube) namespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("pin-admit-%d", time.Now().UnixNano()%1e9)
	if _, err := k.cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
}

func (k kube) deployment(t *testing.T, ns, name, rsName string) *appsv1.ReplicaSet {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": name}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "registry.example.org/placeholder:1"}}}}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	d, err := k.cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := k.cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: rsName, OwnerReferences: controlledBy("Deployment", d.Name, d.UID)},
		Spec:       appsv1.ReplicaSetSpec{Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func (k kube) runningPod(t *testing.T, ns, name string, rs *appsv1.ReplicaSet, image, imageID string) {
	t.Helper()
	ctx := context.Background()
	c := rs.Spec.Template.Spec.Containers[0].Name
	p, err := k.cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: rs.Spec.Template.Labels, OwnerReferences: controlledBy("ReplicaSet", rs.Name, rs.UID)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: c, Image: image}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: c, Image: image, ImageID: imageID, Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	if _, err := k.cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func controlledBy(kind, name string, uid types.UID) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &yes}}
}
