package kubernetes

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pin-tool/pin/internal/host"
)

// TestObserveHealth: on the real API server, with pods' statuses written
// as a kubelet writes them (the Ready condition with its last transition,
// a crash-looping container's last termination and restarts), each
// container carries its pod's Ready condition, since when, and how its
// last run ended; without StartTimes, none of it.
func TestObserveHealth(t *testing.T) {
	t.Parallel()
	k := newCluster(t)
	ns := k.namespace(t)
	ctx := context.Background()
	up := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	flipped := time.Date(2026, 12, 1, 9, 5, 0, 0, time.UTC)
	crashed := time.Date(2026, 12, 1, 9, 7, 0, 0, time.UTC)
	create := func(name string, ready corev1.ConditionStatus, st corev1.ContainerStatus) {
		t.Helper()
		p, err := k.cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: st.Name, Image: st.Image}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{st}
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(up)},
			{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: metav1.NewTime(flipped)},
			{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.NewTime(flipped)},
		}
		if _, err := k.cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	runningSince := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(up)}}
	create("ready", corev1.ConditionTrue, status("app", repo+":1", repo+"@"+digestA, runningSince))
	notReady := status("app", repo+":1", repo+"@"+digestA, runningSince)
	notReady.Ready = false
	create("not-ready", corev1.ConditionFalse, notReady)
	loop := status("app", repo+":1", repo+"@"+digestA, waiting("CrashLoopBackOff"))
	loop.RestartCount = 7
	loop.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2,
		StartedAt: metav1.NewTime(crashed.Add(-time.Second)), FinishedAt: metav1.NewTime(crashed)}}
	create("looping", corev1.ConditionFalse, loop)

	yes, no := true, false
	for _, asked := range []bool{true, false} {
		snap, err := Host{Name: "prod", Kubeconfig: k.kubeconfig, Namespace: ns, StartTimes: asked}.Observe(ctx)
		if err != nil {
			t.Fatalf("Observe: %v", err)
		}
		got := map[string]host.Health{}
		for _, c := range snap.Containers {
			got[c.Pod] = c.Health
		}
		want := map[string]host.Health{
			"ready":     {Ready: &yes, Since: flipped},
			"not-ready": {Ready: &no, Since: flipped},
			"looping":   {Ready: &no, Since: flipped, ExitCode: 2, FinishedAt: crashed},
		}
		if !asked {
			want = map[string]host.Health{"ready": {}, "not-ready": {}, "looping": {}}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("StartTimes %v: health (-want +got):\n%s", asked, d)
		}
	}
}
