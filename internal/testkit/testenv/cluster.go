package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster stands in for a Deployment's controllers and the kubelet on the
// test kube-apiserver (which runs neither): it creates the ReplicaSets and
// pods a controller would, and reports pods' status as a kubelet would.
type Cluster struct{ CS *kubernetes.Clientset }

// NewCluster is a client of the cluster that kubeconfig names.
func NewCluster(t *testing.T, kubeconfig string) *Cluster {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &Cluster{cs}
}

// Namespace creates a namespace of its own for a test, prefix-<n>, and
// deletes it when the test ends.
func (k *Cluster) Namespace(t *testing.T, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1e9)
	if _, err := k.CS.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.CS.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
}

// Deployment creates a Deployment and the ReplicaSet it owns.
func (k *Cluster) Deployment(t *testing.T, ns, name, rsName string) *appsv1.ReplicaSet {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": name}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "registry.example.org/placeholder:1"}}}}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	d, err := k.CS.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := k.CS.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: rsName, OwnerReferences: ControlledBy("Deployment", d.Name, d.UID)},
		Spec:       appsv1.ReplicaSetSpec{Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// ReplicaSet creates a ReplicaSet of the Deployment named deployment, as
// its controller does on a rollout.
func (k *Cluster) ReplicaSet(t *testing.T, ns, deployment, rsName string) *appsv1.ReplicaSet {
	t.Helper()
	ctx := context.Background()
	d, err := k.CS.AppsV1().Deployments(ns).Get(ctx, deployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := k.CS.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: rsName, OwnerReferences: ControlledBy("Deployment", d.Name, d.UID)},
		Spec:       appsv1.ReplicaSetSpec{Selector: d.Spec.Selector, Template: d.Spec.Template}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// RunningPod creates a pod of rs whose one container runs image, and
// reports it running imageID, as the kubelet would.
func (k *Cluster) RunningPod(t *testing.T, ns, name string, rs *appsv1.ReplicaSet, image, imageID string) {
	t.Helper()
	ctx := context.Background()
	c := rs.Spec.Template.Spec.Containers[0].Name
	p, err := k.CS.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: rs.Spec.Template.Labels, OwnerReferences: ControlledBy("ReplicaSet", rs.Name, rs.UID)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: c, Image: image}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: c, Image: image, ImageID: imageID, Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	if _, err := k.CS.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// ControlledBy is the owner reference of an object its controller made.
func ControlledBy(kind, name string, uid types.UID) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &yes}}
}

// DeploymentWebhook registers url (https, its certificate signed by
// caPEM) as the validating webhook, named name, of the Deployments of
// namespace ns alone (other tests share the API server): on create and
// update, failing closed, answered within timeoutSeconds. It is deleted
// when the test ends. The API server picks it up within a moment.
func (k *Cluster) DeploymentWebhook(t *testing.T, name, ns, url string, caPEM []byte, timeoutSeconds int32) {
	t.Helper()
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	wh := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "images.pin.dev",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeoutSeconds,
			AdmissionReviewVersions: []string{"v1"},
		}}}
	whs := k.CS.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if _, err := whs.Create(context.Background(), wh, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { whs.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}
