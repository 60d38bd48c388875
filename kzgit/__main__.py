from kzgit.cli.main import main

raise SystemExit(main())
