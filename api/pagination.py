"""Every API list is paged: 50 items by default, `page_size` up to 500 (a larger one gives
500). Both numbers are read strictly: DRF would answer `?page=abc` with a 404 and ignore
`?page_size=abc` (the default size, as if it had not been sent); here anything but a whole
number from 1 is a 400 naming the parameter. A page past the end stays a 404."""

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination

from api.selectors import MAX_ID, parse_id


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def _whole_number(self, request, name: str) -> int | None:
        """The parameter's number, None when absent; a 400 when it is not one."""
        raw = request.query_params.get(name)
        if raw is None:
            return None
        number = parse_id(raw)
        if number is None:
            raise ValidationError({name: [f"a whole number from 1 to {MAX_ID}"]})
        return number

    def get_page_size(self, request):
        number = self._whole_number(request, self.page_size_query_param)
        return self.page_size if number is None else min(number, self.max_page_size)

    def get_page_number(self, request, paginator):
        if request.query_params.get(self.page_query_param) in self.last_page_strings:
            return paginator.num_pages  # `?page=last`, as DRF reads it
        return self._whole_number(request, self.page_query_param) or 1

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"].update(minimum=1, maximum=MAX_ID)
            if parameter["name"] == self.page_size_query_param:
                parameter["description"] = (
                    f"Items per page ({self.page_size} by default; above "
                    f"{self.max_page_size}: {self.max_page_size})."
                )
        return parameters
