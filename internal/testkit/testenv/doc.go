// Package testenv gives tests the real servers that scripts/test starts: a
// plain CNCF distribution registry, a second one behind htpasswd basic auth,
// a third one behind bearer-token auth (its token server and front door is
// ./cmd/tokenserver), a Docker Engine on a private unix socket and on a
// TLS port, an sshd in front of it, Podman's Docker-compatible API, two
// registries over TLS (one requiring client certificates), a
// Kubernetes API server, a git daemon (NewGitRemote) and a Gitea
// (GiteaServer); and the real cosign CLI (Cosign), built by scripts/cosign.
// CA makes and reads test certificates.
//
// The servers are found through environment variables set by scripts/test:
//
//	PIN_TEST_REGISTRY           host:port of the plain registry
//	PIN_TEST_REGISTRY_AUTH      host:port of the basic-auth registry
//	PIN_TEST_REGISTRY_USER      user name for PIN_TEST_REGISTRY_AUTH
//	PIN_TEST_REGISTRY_PASSWORD  password for PIN_TEST_REGISTRY_AUTH
//	PIN_TEST_REGISTRY_TOKEN     host:port of the bearer-token registry
//	PIN_TEST_DOCKER_HOST        Docker Engine endpoint, unix:///path/docker.sock
//	PIN_TEST_KUBECONFIG         kubeconfig of the Kubernetes API server
//	PIN_TEST_TLS_DIR            test CA, client and server certificates
//	PIN_TEST_DOCKER_TLS_HOST    the same engine, tcp://127.0.0.1:PORT, --tlsverify
//	PIN_TEST_SSH_HOST           ssh://root@127.0.0.1:PORT in front of the engine
//	PIN_TEST_SSH_DIR            its keys, known_hosts, ssh_config, bin/ssh
//	PIN_TEST_PODMAN_HOST        Podman's Docker API, unix:///path/podman.sock
//	PIN_TEST_REGISTRY_TLS       host:port of a registry over TLS (test CA)
//	PIN_TEST_REGISTRY_MTLS      the same, requiring client certificates
//	PIN_TEST_GIT_URL            git://127.0.0.1:PORT, a git daemon with receive-pack
//	PIN_TEST_GIT_ROOT           the folder of the repositories it serves
//	PIN_TEST_GITEA_URL          a Gitea, http://127.0.0.1:PORT
//	PIN_TEST_GITEA_USER         its admin user
//	PIN_TEST_GITEA_PASSWORD     its admin's password
//	PIN_TEST_COSIGN             the real cosign CLI (Cosign), no server
//
// When a variable is missing or its server does not answer, the helpers skip
// the test, except when CI is set: then they fail it, so that a CI run can
// never pass by skipping its integration tests.
package testenv
