// Package authz is pin's Docker Engine authorization plugin ("pin authz"):
// the Engine's authz plugin protocol (Plugin.Activate,
// AuthZPlugin.AuthZReq, AuthZPlugin.AuthZRes, JSON over HTTP on a unix
// socket). It judges one request, POST /containers/create: when the new
// container takes over one that a module covers — the same container name,
// a pin.module label, a runs_on container name, or Compose's
// com.docker.compose.project and .service labels (Compose renames the
// container it replaces before it creates the new one) — its image is held
// against what that module's containers on the Engine run and what the
// lock names (package enforce, resolve.Judge), and a downgrade or an
// unknown order is denied with resolve's refusal, unless the new container
// is labelled pin.dev/allow-downgrade (and pin.dev/restore for a one_way
// module). Everything else is allowed; responses are always allowed.
//
// What it cannot decide (the Engine or a registry failing, the time budget
// spent) is denied, or allowed with FailOpen; either way it is logged. What
// the Engine does when the plugin does not answer is the Engine's: it
// fails every request, /_ping too, with HTTP 500 after about 32 s of
// retries, until the plugin is back (docs/reference.md).
//
// It reads the Engine through the catalogue's Docker host adapter, over
// the Engine's API, as any client: those requests come back to the plugin
// and are allowed. It does not install itself: dockerd finds it by name
// (--authorization-plugin=NAME) in /run/docker/plugins or
// /etc/docker/plugins.
package authz
