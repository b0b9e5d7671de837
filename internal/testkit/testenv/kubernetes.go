package testenv

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
)

// EnvKubeconfig names the kubeconfig of the test cluster: a real
// kube-apiserver (with etcd, no kubelet, no controller manager) that
// scripts/test starts as root.
const EnvKubeconfig = "PIN_TEST_KUBECONFIG"

// Kubernetes returns the path of a kubeconfig whose current context is the
// test cluster, with a static token in group system:masters (allowed
// everything). The cluster authorizes with RBAC, so a test can also run pin
// with a service account's token (TokenRequest) and a Role of its own. It
// skips the test when the cluster is not running, or fails it under CI.
//
// No kubelet runs: a test stands in for one by writing pods' status
// subresource, and there is no controller manager, so a test creates the
// ReplicaSets and pods a Deployment would have itself.
func Kubernetes(t testing.TB) string {
	t.Helper()
	path := lookup(t, "kube-apiserver", runAsRootHint, EnvKubeconfig)
	if err := probeKubernetes(path); err != nil {
		unavailable(t, "kube-apiserver", runAsRootHint, "%s=%s: %v", EnvKubeconfig, path, err)
	}
	return path
}

// kubeconfig is the part of a kubeconfig that scripts/test writes (as
// JSON, which kubeconfig loaders read as well as YAML) and the probe needs.
type kubeconfig struct {
	Clusters []struct {
		Cluster struct {
			Server   string `json:"server"`
			CA       string `json:"certificate-authority"`
			Insecure bool   `json:"insecure-skip-tls-verify"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		User struct {
			Token string `json:"token"`
		} `json:"user"`
	} `json:"users"`
}

// probeKubernetes checks that the API server of the kubeconfig at path
// answers GET /readyz with 200 for its token.
func probeKubernetes(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var kc kubeconfig
	if err := json.Unmarshal(b, &kc); err != nil {
		return fmt.Errorf("not the JSON kubeconfig scripts/test writes: %w", err)
	}
	if len(kc.Clusters) == 0 || len(kc.Users) == 0 {
		return fmt.Errorf("no cluster or no user")
	}
	cl := kc.Clusters[0].Cluster
	tc := &tls.Config{InsecureSkipVerify: cl.Insecure}
	if cl.CA != "" {
		pem, err := os.ReadFile(cl.CA)
		if err != nil {
			return err
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return fmt.Errorf("no certificate in %s", cl.CA)
		}
	}
	c := &http.Client{Timeout: probeTimeout, Transport: &http.Transport{TLSClientConfig: tc}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, cl.Server+"/readyz", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+kc.Users[0].User.Token)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s/readyz: status %d, want 200", cl.Server, resp.StatusCode)
	}
	return nil
}
