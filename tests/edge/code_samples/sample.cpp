// Templates, namespaces, lambdas.
#include <vector>
#include <memory>

namespace geo {

template <typename T>
struct Point {
    T x{}, y{};
    constexpr T dot(const Point& o) const noexcept { return x * o.x + y * o.y; }
};

class Shape {
public:
    virtual ~Shape() = default;
    virtual double area() const = 0;
private:
    std::vector<Point<double>> points_;
};

std::unique_ptr<Shape> make_shape(int sides);

double total_area(const std::vector<std::unique_ptr<Shape>>& shapes)
{
    double sum = 0.0;
    for (const auto& s : shapes) {
        sum += s->area();
    }
    auto twice = [&](double v) -> double { return 2 * v; };
    return twice(sum) / 2'000.0;
}

}  // namespace geo

int main() {
    std::string s = R"(raw "string")";
    const char* u = u8"utf-8";
    return static_cast<int>(geo::total_area({}));
}
