from offctl.commands.app import main

main()
