"""The floor for start-up: a minimal one-command Typer app, in the same environment as ckptcalc."""

import typer

app = typer.Typer()


@app.command()
def main(json_output: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Print an empty JSON object."""
    print("{}")


if __name__ == "__main__":
    app()
