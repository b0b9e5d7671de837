package admit

import (
	"context"
	"encoding/json"
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
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// exampleWebhook is examples/kubernetes/admission's
// ValidatingWebhookConfiguration, as a user applies it, but for its
// clientConfig (the example's caBundle is a placeholder).
func exampleWebhook(t *testing.T) admissionregistrationv1.ValidatingWebhook {
	t.Helper()
	f, err := os.Open("../../examples/kubernetes/admission/validatingwebhookconfiguration.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var raw map[string]any
	if err := yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	webhooks, _ := raw["webhooks"].([]any)
	if len(webhooks) != 1 {
		t.Fatalf("the example has %d webhooks", len(webhooks))
	}
	delete(webhooks[0].(map[string]any), "clientConfig")
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var c admissionregistrationv1.ValidatingWebhookConfiguration
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c.Webhooks[0]
}

// TestAdmitSideDoorsAgainstAPIServer registers pin admit with the real
// kube-apiserver with the rules of the example configuration, and tries
// the side ways to run an older image under a module (each a request to
// the API server, answered by pin through it):
//   - an update of Deployment web to an older image that drops the
//     template label module web selects it by (spec.selector stays valid);
//   - a Job created from CronJob backup (as kubectl create job --from
//     makes it), and a Pod of such a Job (as the Job controller makes it):
//     traced to the CronJob, the Job read from the API server;
//   - a Pod of a ReplicaSet of Deployment forgejo not named after it;
//   - an ephemeral container (kubectl debug) in a Pod of forgejo.
//
// Each is denied with pin's words; the overrides (on the CronJob, on the
// Pod for an ephemeral container) let them through.
func TestAdmitSideDoorsAgainstAPIServer(t *testing.T) {
	reg := testenv.Registry(t)
	kc := testenv.Kubernetes(t)
	repo := fmt.Sprintf("%s/admit/side-%d", reg, time.Now().UnixNano())
	release := func(tag, date string) string {
		return testimage.PushRelease(t, repo, tag, date, testimage.Options{Content: tag}).DigestStr()
	}
	release("1.22.6", "2024-12-12")
	running := release("1.27.3", "2026-09-01")
	image := func(tag string) string { return repo + ":" + tag }

	k := testenv.NewCluster(t, kc)
	ctx := context.Background()
	ns := k.Namespace(t, "pin-admit-side")
	cs := k.CS
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	yes := true
	owner := func(apiVersion, kind, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &yes}}
	}
	// runningPod creates a pod and reports its container running 1.27.3,
	// as a kubelet would.
	runningPod := func(name string, labels map[string]string, owners []metav1.OwnerReference, ctr string) {
		t.Helper()
		p, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: owners},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: ctr, Image: image("1.27.3")}}}}, metav1.CreateOptions{})
		must(err)
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: ctr, Image: image("1.27.3"), ImageID: repo + "@" + running, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
		_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		must(err)
	}

	// What runs: forgejo (a Deployment), web (a Deployment whose template
	// module web selects by tier=web) and backup (a CronJob's Job), each
	// 1.27.3.
	rs := k.Deployment(t, ns, "forgejo", "forgejo-6d9f")
	runningPod("forgejo-6d9f-aaaaa", map[string]string{"app": "forgejo", "pod-template-hash": "6d9f"}, owner("apps/v1", "ReplicaSet", rs.Name, rs.UID), "forgejo")
	webLabels := map[string]string{"app": "web", "tier": "web"}
	web, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: webLabels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image("1.27.3")}}}}}}, metav1.CreateOptions{})
	must(err)
	webRS, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-5c4b", OwnerReferences: owner("apps/v1", "Deployment", web.Name, web.UID)},
		Spec: appsv1.ReplicaSetSpec{Selector: web.Spec.Selector, Template: web.Spec.Template}}, metav1.CreateOptions{})
	must(err)
	runningPod("web-5c4b-aaaaa", webLabels, owner("apps/v1", "ReplicaSet", webRS.Name, webRS.UID), "web")
	jobTemplate := func(tag string) batchv1.JobTemplateSpec {
		return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "backup", Image: image(tag)}}}}}}
	}
	cron, err := cs.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "backup"},
		Spec: batchv1.CronJobSpec{Schedule: "@daily", JobTemplate: jobTemplate("1.27.3")}}, metav1.CreateOptions{})
	must(err)
	// job makes a Job of CronJob backup as kubectl create job --from does.
	job := func(name, tag string) *batchv1.Job {
		t := jobTemplate(tag)
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"cronjob.kubernetes.io/instantiate": "manual"},
			OwnerReferences: owner("batch/v1", "CronJob", cron.Name, cron.UID)}, Spec: t.Spec}
	}
	ran, err := cs.BatchV1().Jobs(ns).Create(ctx, job("backup-29000000", "1.27.3"), metav1.CreateOptions{})
	must(err)
	runningPod("backup-29000000-aaaaa", nil, owner("batch/v1", "Job", ran.Name, ran.UID), "backup")

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

module "web" {
  image  = %q
  policy = "at-least-running"
  runs_on "prod" { selector = "tier=web" }
}

module "backup" {
  image  = %q
  policy = "at-least-running"
  runs_on "prod" {
    workload  = "cronjob/backup"
    container = "backup"
  }
}
`, kc, ns, repo, repo, repo)
	must(os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644))
	e, _, err := enforce.Load(filepath.Join(dir, "catalogue.hcl"), filepath.Join(dir, "pin.lock.hcl"),
		source.Options{CacheDir: filepath.Join(dir, "cache"), Concurrency: 4, Timeout: 5 * time.Second})
	must(err)
	logs := &testenv.Buffer{}
	srv := &Server{Enforcer: e, Namespaces: map[string]string{ns: "prod"}, Owners: map[string]Owners{"prod": e.Hosts["prod"].(Owners)},
		FailurePolicy: Fail, Log: slog.New(slog.NewJSONHandler(logs, nil))}
	caPEM, certFile, keyFile := testCA(t, dir)
	certs := &Certificates{CertFile: certFile, KeyFile: keyFile}
	must(certs.Load())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	hs := &http.Server{Handler: srv, TLSConfig: certs.TLSConfig(), ReadHeaderTimeout: 5 * time.Second}
	go hs.ServeTLS(ln, "", "")
	t.Cleanup(func() { hs.Close() })

	// The example's rules, for this test's namespace and this webhook.
	wh := exampleWebhook(t)
	url := fmt.Sprintf("https://%s/validate", ln.Addr())
	wh.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM}
	wh.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	timeout := int32(5)
	wh.TimeoutSeconds = &timeout
	whName := "pin-admit-side-" + ns
	whs := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	_, err = whs.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: whName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{wh}}, metav1.CreateOptions{})
	must(err)
	t.Cleanup(func() { whs.Delete(context.Background(), whName, metav1.DeleteOptions{}) })

	dry := []string{metav1.DryRunAll}
	refused := func(what string, err error, want ...string) {
		t.Helper()
		for _, w := range append([]string{`denied the request: pin: `}, want...) {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: want %q in the refusal, got %v", what, w, err)
				return
			}
		}
	}

	// 4. The update that drops tier=web with an older image; the API server
	// takes the configuration up within a moment.
	dropLabel := func() error {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		must(err)
		d.Spec.Template.Labels = map[string]string{"app": "web"}
		d.Spec.Template.Spec.Containers[0].Image = image("1.22.6")
		_, err = cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{DryRun: dry})
		return err
	}
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if err = dropLabel(); err != nil {
			break
		}
	}
	refused("older web without tier=web", err, `container "web": module "web": refusing a downgrade`, "version 1.22.6 < 1.27.3")

	// 5. kubectl create job --from=cronjob/backup, with an older image.
	_, err = cs.BatchV1().Jobs(ns).Create(ctx, job("backup-manual", "1.22.6"), metav1.CreateOptions{DryRun: dry})
	refused("a Job of CronJob backup", err, `module "backup": refusing a downgrade`, "annotate the CronJob backup (which this Job belongs to) or the Job with pin.dev/allow-downgrade")
	// The Job controller's Pod of such a Job: the Job is read to find the
	// CronJob.
	manual, err := cs.BatchV1().Jobs(ns).Create(ctx, job("backup-manual", "1.27.3"), metav1.CreateOptions{})
	must(err)
	_, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "backup-manual-aaaaa", OwnerReferences: owner("batch/v1", "Job", manual.Name, manual.UID)},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "backup", Image: image("1.22.6")}}}}, metav1.CreateOptions{DryRun: dry})
	refused("a Pod of a Job of CronJob backup", err, `module "backup": refusing a downgrade`)
	// A ReplicaSet of forgejo not named <deployment>-<hash>, and its Pod.
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "forgejo", metav1.GetOptions{})
	must(err)
	other, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "forgejo-rollout", OwnerReferences: owner("apps/v1", "Deployment", d.Name, d.UID)},
		Spec: appsv1.ReplicaSetSpec{Selector: d.Spec.Selector, Template: d.Spec.Template}}, metav1.CreateOptions{})
	must(err)
	_, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "forgejo-rollout-aaaaa", Labels: map[string]string{"app": "forgejo"},
		OwnerReferences: owner("apps/v1", "ReplicaSet", other.Name, other.UID)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "forgejo", Image: image("1.22.6")}}}}, metav1.CreateOptions{DryRun: dry})
	refused("a Pod of a ReplicaSet of forgejo", err, `module "forge": refusing a downgrade`)
	// The reason on the CronJob lets its Jobs through.
	cron, err = cs.BatchV1().CronJobs(ns).Get(ctx, "backup", metav1.GetOptions{})
	must(err)
	cron.Annotations = map[string]string{enforce.AllowDowngradeKey: "restore drill"}
	_, err = cs.BatchV1().CronJobs(ns).Update(ctx, cron, metav1.UpdateOptions{})
	must(err)
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job("backup-drill", "1.22.6"), metav1.CreateOptions{DryRun: dry}); err != nil {
		t.Errorf("a Job of the annotated CronJob: %v", err)
	}

	// 6. kubectl debug --image=<older> --target=forgejo.
	debug := func() error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "forgejo-6d9f-aaaaa", metav1.GetOptions{})
		must(err)
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{TargetContainerName: "forgejo",
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger-x", Image: image("1.22.6"), ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePolicy: corev1.TerminationMessageReadFile}})
		_, err = cs.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx, p.Name, p, metav1.UpdateOptions{})
		return err
	}
	refused("an ephemeral container in forgejo's Pod", debug(), `ephemeral container "debugger-x": module "forge": refusing a downgrade`, enforce.AllowEphemeralKey)
	p, err := cs.CoreV1().Pods(ns).Get(ctx, "forgejo-6d9f-aaaaa", metav1.GetOptions{})
	must(err)
	p.Annotations = map[string]string{enforce.AllowEphemeralKey: "incident 42"}
	_, err = cs.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
	must(err)
	if err := debug(); err != nil {
		t.Errorf("an ephemeral container in the annotated Pod: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, `"container":"debugger-x"`) || !strings.Contains(l, `"override":"downgrade allowed: incident 42"`) {
		t.Errorf("the ephemeral container's decision is not logged:\n%s", l)
	}
}
