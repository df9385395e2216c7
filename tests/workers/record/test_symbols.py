from __future__ import annotations

from executive.workers.record import symbols

SHOWN = symbols.numbered(
    """    45→class StaticFilesHandlerMixin:
    46→    handles_files = True
    47→
    48→    def get_response(self, request):
    49→        try:
    50→            return self.serve(request)
    51→        except Http404 as e:
    52→            return response_for_exception(request, e)"""
)


def test_an_edit_names_the_definitions_around_it_and_those_it_makes():
    old = "        try:\n            return self.serve(request)"
    assert symbols.of_edit(SHOWN, old, "        return self.serve(request)") == [
        "StaticFilesHandlerMixin.get_response"
    ]
    new = (
        "    def get_response(self, request):\n        return 1\n\n"
        "    async def get_response_async(self, request):\n        return 2\n"
    )
    assert symbols.of_edit(SHOWN, "    def get_response(self, request):", new) == [
        "StaticFilesHandlerMixin.get_response",
        "StaticFilesHandlerMixin.get_response_async",
    ]


def test_an_edit_of_text_the_record_never_showed_names_only_what_it_defines():
    assert symbols.of_edit({}, "x = 1", "def helper():\n    pass\n") == ["helper"]
    assert symbols.of_edit(SHOWN, "not shown anywhere", "y = 2") == []


def test_a_new_file_names_its_top_level_definitions_in_several_languages():
    python = "class Parser:\n    def parse(self):\n        pass\n\ndef main():\n    pass\n"
    assert [n for _, n in symbols.defined(python, top_only=True)] == ["Parser", "main"]
    for source, name in (
        ("export default async function render(props) {", "render"),
        ("func (s *Server) Serve(l net.Listener) error {", "Serve"),
        ("pub fn parse_line(line: &str) -> Row {", "parse_line"),
    ):
        assert [n for _, n in symbols.defined(source)] == [name]
    assert symbols.numbered("no listing here") == {}
