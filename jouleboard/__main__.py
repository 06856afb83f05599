from jouleboard.cli import run

run()
