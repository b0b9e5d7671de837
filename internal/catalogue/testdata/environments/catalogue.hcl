host "s1" {
  snapshot = "s1.json"
}

host "s2" {
  snapshot = "s2.json"
}

host "p1" {
  snapshot = "p1.json"
}

environment "staging" {
  hosts = ["s2", "s1"]
}

environment "production" {
  hosts = ["p1"]
  from  = "staging"
  soak  = "24h"
}

module "api" {
  image  = "registry.example.org/api"
  policy = "at-least-running"
  pin    = "1.0.0"
  runs_on "s1" { container = "api" }
  runs_on "p1" { container = "api" }
}

module "canary" {
  image  = "registry.example.org/canary"
  policy = "at-least-running"
  pin    = "1.0.0"
  runs_on "s2" { container = "canary" }
}

module "labelled" {
  image  = "registry.example.org/labelled"
  policy = "at-least-running"
  pin    = "1.0.0"
}
