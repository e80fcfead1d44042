"""Wrappers add one behaviour around any model without changing the ``Model`` interface."""

from __future__ import annotations

from jubensha.llm.base import Model, Request, Response


class ModelWrapper(Model):
    """Passes everything to ``inner``; subclasses override what they change."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name

    async def generate(self, request: Request) -> Response:
        return await self.inner.generate(request)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await self.inner.embed(texts)

    async def aclose(self) -> None:
        await self.inner.aclose()
