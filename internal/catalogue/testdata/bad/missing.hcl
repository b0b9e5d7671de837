# A module must say which image it pins and how: the diagnostics show a
# value to write (TestMissingImageExample writes it).
module "app" { # ERROR: Missing image
  policy = "track-upstream"
}

module "Web_Shop" { # ERROR: Missing image
  policy = "at-least-running"
  pin    = "1.2.3"
}

module "db" { # ERROR: Missing policy
  image = "registry.example.org/team/db"
}
