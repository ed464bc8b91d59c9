from uji.cli import main

raise SystemExit(main())
