# The host the stack runs on. "pin init" adds the modules.
host "dock" {
  docker = "unix:///var/run/docker.sock"
}
