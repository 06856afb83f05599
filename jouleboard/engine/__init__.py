"""The build: inputs -> plan -> render -> output; what is fresh; watching."""
