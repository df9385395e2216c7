from executive.cli import main

main()
