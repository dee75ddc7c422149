package shop.orders

import scala.concurrent.{ExecutionContext, Future}

/** An order line. */
final case class Line(sku: String, qty: Int):
  def total(price: BigDecimal): BigDecimal = price * qty

object Orders {
  val empty: List[Line] = Nil
  private val Pattern = raw"(\w+)-(\d+)".r

  def parse(s: String): Option[Line] = s match {
    case Pattern(sku, n) => Some(Line(sku, n.toInt))
    case _               => None
  }

  def load(id: Long)(using ec: ExecutionContext): Future[List[Line]] =
    Future {
      // look it up
      val msg = s"order $id has ${empty.size} lines: \"none\""
      println(msg)
      empty ++ List(Line("a", 1)) :+ Line("b", 2)
    }

  /* a comment
     on two lines */
  implicit class Ops(val l: Line) extends AnyVal {
    def >>(n: Int): Line = l.copy(qty = l.qty + n)
    def <=> (o: Line): Int = l.qty compare o.qty
  }
}
