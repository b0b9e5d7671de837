package kubernetes

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pin-tool/pin/internal/host"
)

// TestObserveWorkloads: what users run beside Deployments. A CronJob's pod
// is keyed by the CronJob through its Job, a Job nothing owns by the Job;
// init containers (one that completed, one native sidecar that runs) are
// observed as containers are; an ephemeral (debug) container is reported
// as such; a Deployment and a StatefulSet scaled to zero are read from
// their templates (init containers too), one outside the host's selector
// is not, and one scaled to zero whose last pod is still there is read
// from that pod.
func TestObserveWorkloads(t *testing.T) {
	t.Parallel()
	k := newCluster(t)
	ns := k.namespace(t)
	team := map[string]string{"team": "forge"}

	job := k.cronJob(t, ns, "backup", "backup-29400000")
	k.pod(t, ns, "backup-29400000-x1", batchOwner("Job", job), team,
		status("dump", repo+":1", repo+"@"+digestA, terminated("Completed")))
	standalone := k.job(t, ns, "migrate", nil)
	k.pod(t, ns, "migrate-q7", batchOwner("Job", standalone), team,
		status("migrate", repo+":1", repo+"@"+digestA, terminated("Completed")))

	sts := k.object(t, ns, "StatefulSet", "db")
	always := corev1.ContainerRestartPolicyAlways
	k.richPod(t, ns, "db-0", owner("StatefulSet", sts), team, podContainers{
		init: []corev1.ContainerStatus{
			status("schema", repo+":1", repo+"@"+digestB, terminated("Completed")),
			status("proxy", repo+":1", repo+"@"+digestC, running()),
		},
		sidecars: map[string]*corev1.ContainerRestartPolicy{"proxy": &always},
		regular:  []corev1.ContainerStatus{status("postgres", repo+":1", repo+"@"+digestA, running())},
		ephemeral: []corev1.ContainerStatus{
			status("debugger-4x", "registry.example.org/tools/busybox:1", "registry.example.org/tools/busybox@"+digestB, running()),
		},
	})

	zeroTmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "forge", "app": "idle"}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "wait", Image: "registry.example.org/tools/wait:2"}},
			Containers:     []corev1.Container{{Name: "app", Image: repo + ":1.27.3"}},
		}}
	k.scaled(t, ns, "Deployment", "idle", 0, zeroTmpl)
	k.scaled(t, ns, "StatefulSet", "cache", 0, corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "forge", "app": "cache"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "redis", Image: "registry.example.org/db/redis@" + digestC}}}})
	k.scaled(t, ns, "Deployment", "elsewhere", 0, corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "web", "app": "other"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: repo + ":1"}}}})
	// Scaled to zero, its last pod still terminating: the pod says what ran.
	down := k.scaled(t, ns, "StatefulSet", "draining", 0, corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "forge", "app": "draining"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: repo + ":2"}}}})
	k.pod(t, ns, "draining-0", owner("StatefulSet", down), team, status("app", repo+":1", repo+"@"+digestA, running()))

	snap, err := Host{Name: "prod", Kubeconfig: k.kubeconfig, Namespace: ns, Selector: "team=forge"}.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	type seen struct{ id, workload, image, imageID, state string }
	var got []seen
	for _, c := range snap.Containers {
		got = append(got, seen{c.ID, c.Workload, c.Image, c.ImageID, c.State})
	}
	want := []seen{
		{"deployment/idle/app", "deployment/idle", repo + ":1.27.3", repo + ":1.27.3", "scaled to zero"},
		{"draining-0/app", "statefulset/draining", repo + ":1", digestA, "running"},
		{"db-0/debugger-4x", "statefulset/db", "registry.example.org/tools/busybox:1", digestB, "ephemeral: running"},
		{"backup-29400000-x1/dump", "cronjob/backup", repo + ":1", digestA, "terminated: Completed"},
		{"migrate-q7/migrate", "job/migrate", repo + ":1", digestA, "terminated: Completed"},
		{"db-0/postgres", "statefulset/db", repo + ":1", digestA, "running"},
		{"db-0/proxy", "statefulset/db", repo + ":1", digestC, "running"},
		{"statefulset/cache/redis", "statefulset/cache", "registry.example.org/db/redis@" + digestC, "registry.example.org/db/redis@" + digestC, "scaled to zero"},
		{"db-0/schema", "statefulset/db", repo + ":1", digestB, "terminated: Completed"},
		{"deployment/idle/wait", "deployment/idle", "registry.example.org/tools/wait:2", "registry.example.org/tools/wait:2", "scaled to zero"},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(seen{})); d != "" {
		t.Errorf("containers (-want +got):\n%s", d)
	}
	// Templates add no image: nothing is known of one no replica pulled.
	if len(snap.Images) != 3 {
		t.Errorf("images = %+v, want the three digests pods run", snap.Images)
	}
	b, err := snap.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := host.ParseSnapshot(b, "prod"); err != nil || !cmp.Equal(snap, again) {
		t.Errorf("snapshot round trip: %v\n%s", err, cmp.Diff(snap, again))
	}
}

// podContainers are a pod's container statuses by kind; sidecars gives the
// restart policy of init containers that are native sidecars.
type podContainers struct {
	init, regular, ephemeral []corev1.ContainerStatus
	sidecars                 map[string]*corev1.ContainerRestartPolicy
}

// richPod creates a Running pod with init, regular and ephemeral containers
// (the last added through the ephemeralcontainers subresource, as kubectl
// debug does), and reports their statuses as a kubelet would.
func (k *cluster) richPod(t *testing.T, ns, name string, owners []metav1.OwnerReference, labels map[string]string, pc podContainers) {
	t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: owners}}
	for _, s := range pc.init {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: s.Name, Image: s.Image, RestartPolicy: pc.sidecars[s.Name]})
	}
	for _, s := range pc.regular {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: s.Name, Image: s.Image})
	}
	p, err := k.cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	if len(pc.ephemeral) > 0 {
		for _, s := range pc.ephemeral {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
				EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: s.Name, Image: s.Image, TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent}})
		}
		if p, err = k.cs.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx, name, p, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("adding ephemeral containers to %s: %v", name, err)
		}
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.InitContainerStatuses = pc.init
	p.Status.ContainerStatuses = pc.regular
	p.Status.EphemeralContainerStatuses = pc.ephemeral
	if _, err := k.cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("reporting the status of pod %s: %v", name, err)
	}
}

// scaled creates a Deployment or StatefulSet of the given replicas and
// template.
func (k *cluster) scaled(t *testing.T, ns, kind, name string, replicas int32, tmpl corev1.PodTemplateSpec) metav1.Object {
	t.Helper()
	sel := &metav1.LabelSelector{MatchLabels: tmpl.Labels}
	var o metav1.Object
	var err error
	switch kind {
	case "Deployment":
		o, err = k.cs.AppsV1().Deployments(ns).Create(context.Background(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	case "StatefulSet":
		o, err = k.cs.AppsV1().StatefulSets(ns).Create(context.Background(), &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	default:
		t.Fatalf("scaled: kind %s", kind)
	}
	if err != nil {
		t.Fatalf("creating %s %s: %v", kind, name, err)
	}
	return o
}

// cronJob creates a CronJob and, as its controller would, the Job jobName
// that it owns; it returns the Job.
func (k *cluster) cronJob(t *testing.T, ns, name, jobName string) metav1.Object {
	t.Helper()
	cj, err := k.cs.BatchV1().CronJobs(ns).Create(context.Background(), &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTemplate()}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating cron job %s: %v", name, err)
	}
	return k.job(t, ns, jobName, batchOwner("CronJob", cj))
}

func (k *cluster) job(t *testing.T, ns, name string, owners []metav1.OwnerReference) metav1.Object {
	t.Helper()
	j, err := k.cs.BatchV1().Jobs(ns).Create(context.Background(), &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners},
		Spec: batchv1.JobSpec{Template: jobTemplate()}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating job %s: %v", name, err)
	}
	return j
}

func jobTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "app", Image: "registry.example.org/app:1"}}}}
}

// batchOwner is the controller reference to o, a Job or CronJob.
func batchOwner(kind string, o metav1.Object) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: kind, Name: o.GetName(), UID: o.GetUID(), Controller: &yes}}
}
