package kubernetes

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestObserveStartTimes: with StartTimes, each container carries the start
// and the restart count the kubelet reported to the API server (the pods'
// statuses are written here, as a kubelet writes them, at known times);
// a waiting container reports no start. Without StartTimes the snapshot
// holds neither, as before.
func TestObserveStartTimes(t *testing.T) {
	t.Parallel()
	k := newCluster(t)
	ns := k.namespace(t)
	up := time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC)
	done := time.Date(2026, 11, 20, 4, 0, 0, 0, time.UTC)
	run := status("app", repo+":1", repo+"@"+digestA, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(up)}})
	run.RestartCount = 3
	stop := status("app", repo+":1", repo+"@"+digestA, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: metav1.NewTime(done)}})
	k.pod(t, ns, "up", nil, nil, run)
	k.pod(t, ns, "done", nil, nil, stop)
	k.pod(t, ns, "crashing", nil, nil, status("app", repo+":1", repo+"@"+digestA, waiting("CrashLoopBackOff")))

	type start struct {
		At       time.Time
		Restarts int
	}
	for _, asked := range []bool{true, false} {
		snap, err := Host{Name: "prod", Kubeconfig: k.kubeconfig, Namespace: ns, StartTimes: asked}.Observe(context.Background())
		if err != nil {
			t.Fatalf("Observe: %v", err)
		}
		got := map[string]start{}
		for _, c := range snap.Containers {
			got[c.Pod] = start{c.StartedAt, c.RestartCount}
		}
		want := map[string]start{"up": {up, 3}, "done": {done, 0}, "crashing": {}}
		if !asked {
			want = map[string]start{"up": {}, "done": {}, "crashing": {}}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("StartTimes %v: starts (-want +got):\n%s", asked, d)
		}
	}
}
