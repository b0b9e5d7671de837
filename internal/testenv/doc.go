// Package testenv gives tests the real servers that scripts/test starts: a
// plain CNCF distribution registry, a second one behind htpasswd basic auth,
// a third one behind bearer-token auth (its token server and front door is
// ./cmd/tokenserver), a Docker Engine on a private unix socket, and a
// Kubernetes API server.
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
//
// When a variable is missing or its server does not answer, the helpers skip
// the test, except when CI is set: then they fail it, so that a CI run can
// never pass by skipping its integration tests.
package testenv
