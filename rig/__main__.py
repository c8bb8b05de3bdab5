from rig.cli import main

main()
