package kubernetes

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestObjectMeta reads, from a real API server, the owners pin admit
// follows: a ReplicaSet's Deployment, a Job's CronJob, a workload's
// annotations; an object that does not exist is NotFound, and a kind pin
// does not read is an error.
func TestObjectMeta(t *testing.T) {
	t.Parallel()
	k := newCluster(t)
	ns := k.namespace(t)
	ctx := context.Background()
	rs := k.deployment(t, ns, "forgejo", "forgejo-rollout", map[string]string{"app": "forgejo"})
	jt := template(nil)
	jt.Spec.RestartPolicy = "Never"
	cron, err := k.cs.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "backup", Annotations: map[string]string{"pin.dev/allow-downgrade": "drill"}},
		Spec: batchv1.CronJobSpec{Schedule: "@daily", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jt}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	if _, err := k.cs.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "backup-manual",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cron.Name, UID: cron.UID, Controller: &yes}}},
		Spec: batchv1.JobSpec{Template: jt}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h := Reusing(Host{Name: "prod", Kubeconfig: k.kubeconfig, Namespace: ns})

	m, err := h.ObjectMeta(ctx, "ReplicaSet", rs.GetName())
	if err != nil || len(m.OwnerReferences) != 1 || m.OwnerReferences[0].Kind != "Deployment" || m.OwnerReferences[0].Name != "forgejo" {
		t.Errorf("ReplicaSet: %+v, %v", m, err)
	}
	m, err = h.ObjectMeta(ctx, "Job", "backup-manual")
	if err != nil || len(m.OwnerReferences) != 1 || m.OwnerReferences[0].Kind != "CronJob" || m.OwnerReferences[0].Name != "backup" {
		t.Errorf("Job: %+v, %v", m, err)
	}
	if m, err = h.ObjectMeta(ctx, "CronJob", "backup"); err != nil || m.Annotations["pin.dev/allow-downgrade"] != "drill" {
		t.Errorf("CronJob: %+v, %v", m, err)
	}
	if m, err = h.ObjectMeta(ctx, "Deployment", "forgejo"); err != nil || m.Name != "forgejo" {
		t.Errorf("Deployment: %+v, %v", m, err)
	}
	if _, err := h.ObjectMeta(ctx, "Job", "nothing"); !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "host prod") {
		t.Errorf("a Job that does not exist: %v", err)
	}
	if _, err := h.ObjectMeta(ctx, "Secret", "x"); err == nil {
		t.Error("a Secret was read")
	}
}
